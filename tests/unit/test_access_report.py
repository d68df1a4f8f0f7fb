"""Issue 8 item 20: the data of a person's access report (control, Qt-free) and the
owner-only write it is saved with."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.control.access_report import gather
from engram.control.demo import MAYA, SAM, build_demo
from engram.control.private_file import write_private
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


def test_issue8_item20_the_report_holds_everything_kept_about_the_person(demo: Store) -> None:
    report = gather(PersonSession(demo, MAYA, "staff:dana"))
    texts = {n.view.text for n in report.notes}
    assert {"Lives in Lyon.", "Lives in Grenoble.", "Allergic to penicillin."} <= texts
    statuses = {n.view.note.status.value for n in report.notes}
    assert {"active", "contradicted", "corrected", "deleted", "retired"} <= statuses
    lyon = next(n for n in report.notes if n.view.text == "Lives in Lyon.")
    assert lyon.closed is not None and lyon.closed.startswith(
        "Closed by “Lives in Grenoble.” — a contradiction"
    )
    assert lyon.sources[0].startswith("the conversation of ")
    assert lyon.sources[0].endswith("(“Bonjour! I just moved to Lyon for a new…”)")
    first = report.conversations[0]
    assert first.first_words and first.first_words.startswith("Bonjour! I just moved to Lyon")
    assert any(c.removed_tool_results for c in report.conversations)
    assert any(len(c.info.participants) > 1 for c in report.conversations)
    assert {c["status"] for c in report.candidates} == {"pending", "applied", "rejected"}
    assert report.audit and any(row["actor"] == "staff:dana" for row in report.audit)
    assert report.verify_ok and report.verify_entries > 0
    assert report.verify_sentence.startswith("Verified: all")
    assert (
        report.erasure_sentence == "maya has not been erased: everything listed here is still kept."
    )
    assert report.generated_by == "staff:dana" and report.usage_events > 0
    assert report.digest  # the demo never rebuilt a profile: report.profile is ""


def test_issue8_item20_C4_deleted_conversations_appear_in_the_erasure_status(demo: Store) -> None:
    report = gather(PersonSession(demo, SAM, SAM))
    [deleted] = report.deleted_conversations
    assert deleted.notes_closed == 1 and deleted.rows_deleted and deleted.rows_deleted > 0
    assert report.notes_without_text == 1
    assert "1 of their conversations was deleted" in report.erasure_sentence
    phone = next(n for n in report.notes if n.view.text is None)
    [source] = phone.sources
    assert source.startswith("a conversation since deleted, ")


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
