"""Issue 8 item 20: the data of a person's access report (control, Qt-free) and the
owner-only write it is saved with."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.control.access_report import build_report
from engram.control.demo import MAYA, SAM, build_demo
from engram.control.private_file import write_private
from engram.control.report_document import Section
from engram.control.session import PersonSession
from engram.model.errors import InvalidInput
from engram.store import crypto
from engram.store.store import Store
from tests.conftest import PASSPHRASE


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    location = str(tmp_path_factory.mktemp("report") / "demo.engram")
    build_demo(location, passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS)
    store = Store.open(location, passphrase=PASSPHRASE)
    yield store
    store.close()


def _lines(section: Section) -> str:
    return "\n".join(
        "\n".join(
            [*([b.heading] if b.heading else []), *(f"{k}: {v}" for k, v in b.facts), *b.lines]
        )
        for b in section.blocks
    )


def test_issue8_item20_the_report_holds_everything_kept_about_the_person(demo: Store) -> None:
    # Rewritten for issue 17 item 14's report (control.access_report.build_report).
    report = build_report(PersonSession(demo, MAYA, "staff:dana"))
    notes = _lines(report.section("notes"))
    for text in ("Lives in Lyon.", "Lives in Grenoble.", "Allergic to penicillin."):
        assert f": {text}\n" in notes
    for status in ("holds now", "something newer contradicted it", "it was corrected"):
        assert f"Status: no longer holds: {status}" in notes or f"Status: {status}" in notes
    assert "Status: deleted" in notes and "its time ran out" in notes
    assert "note 1 “Lives in Lyon.” contradicted by note 10 “Lives in Grenoble.”" in notes
    assert "Learned from: what was said in message 1 of conversation 1 (" in notes
    talk = _lines(report.section("conversations"))
    assert "Bonjour! I just moved to Lyon" in talk and "[Removed on " in talk
    assert "Who could read its answers: you and sam" in talk
    candidates = _lines(report.section("candidates"))
    assert {"Decision: pending", "Decision: applied", "Decision: rejected"} <= set(
        candidates.splitlines()
    )
    assert "support staff dana:" in _lines(report.section("audit"))
    integrity = _lines(report.section("integrity"))
    assert "signatures are intact" in integrity
    assert _lines(report.section("erased")) == ("Deleted notes (closed, never used again): note 7.")
    assert report.sections[0].intro[0].startswith("This report was made on ")
    assert "by support staff dana" in report.sections[0].intro[0]
    assert report.counts.disclosures > 0


def test_issue8_item20_C4_deleted_conversations_appear_in_the_erasure_status(demo: Store) -> None:
    report = build_report(PersonSession(demo, SAM, SAM))
    erased = report.section("erased").blocks
    deleted = erased[0]
    assert deleted.heading.startswith("A conversation deleted on ") and deleted.heading.endswith(
        " by you"
    )
    assert "1 note learned from it was closed" in deleted.lines[0]
    assert deleted.lines[1].startswith("The store's erasure record counts ")
    assert report.counts.deleted_conversations == 1
    [wordless] = [b for b in report.section("notes").blocks if "were erased" in b.heading]
    assert "Learned from: what was said in a conversation no longer kept" in "\n".join(
        f"{k}: {v}" for k, v in wordless.facts
    )
    assert "Notes whose words were erased with their conversation: note " in erased[-1].lines[0]


def test_issue8_item20_write_private_is_owner_only_whole_or_nothing(tmp_path: Path) -> None:
    target = tmp_path / "report.pdf"
    target.write_bytes(b"old")
    target.chmod(0o644)
    assert write_private(target, b"%PDF-new") == target
    assert target.read_bytes() == b"%PDF-new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["report.pdf"]  # no temporary left
    with pytest.raises(InvalidInput, match="does not exist; choose another place"):
        write_private(tmp_path / "missing" / "report.pdf", b"x")
    assert not (tmp_path / "missing").exists()  # never created silently
