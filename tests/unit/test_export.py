"""Issue 15 item 7: the export streams (same JSON, a page at a time), is written whole or
not at all, and every export is recorded in the person's audit log, content-free."""

from __future__ import annotations

import io
import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.control import candidates, forensics, notes
from engram.control.demo import MAYA, SAM, build_demo
from engram.control.json_stream import Lazy, chunks, materialize
from engram.control.session import PersonSession
from engram.control.views import conversation_json
from engram.model.clock import iso
from engram.model.errors import InvalidInput
from engram.model.events import EventType
from engram.runtime.conversations import conversations_of, turns
from engram.store import crypto, journal, projection_memory, projection_state
from engram.store.store import Store
from tests.conftest import PASSPHRASE


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    location = str(tmp_path_factory.mktemp("export") / "demo.engram")
    build_demo(location, passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS)
    store = Store.open(location, passphrase=PASSPHRASE)
    yield store
    store.close()


def _held_whole(session: PersonSession) -> dict[str, Any]:
    """The export as it was built before it streamed: whole, from the listing functions."""
    store, person = session.store, session.person
    with store.read() as conn:
        memory = projection_memory.unscoped_memory(conn, person)
        digest = projection_state.recent_digest(conn, person, 1 << 30)
        digest_texts = journal.texts(store, conn, person, [d.seq for d in digest])
    conversations = [
        {
            **conversation_json(info, person),
            "turns": [
                {
                    "turn": e.ref,
                    "role": e.kind.value,
                    "author": e.author,
                    "at": iso(e.at),
                    "status": e.status,
                    "text": text,
                }
                for e, text in turns(store, info.id)
            ],
        }
        for info in conversations_of(store, person)
    ]
    return {
        "person": person,
        "exported_at": None,  # the export's own moment, filled in from the file
        "exported_by": session.actor,
        "notes": [v.to_json() for v in notes.all_notes(session)],
        "note_count": len(memory._notes),
        "digest": [
            {"at": iso(d.at), "conversation": d.conversation, "text": digest_texts.get(d.seq)}
            for d in sorted(digest, key=lambda d: d.seq)
        ],
        "usage_events": sum(len(v) for v in memory.usage.values()),
        "candidates": candidates.list_candidates(session),
        "profile": notes.profile_document(session),
        "conversations": conversations,
        "audit": forensics.audit_log(session),
    }


def _exports(store: Store, person: str) -> list[dict[str, Any]]:
    with store.read() as conn:
        return [
            e.body.to_json()
            for e in journal.events_of_types(
                conn, PersonSession.open(store, person).person, [EventType.EXPORTED]
            )
        ]


@pytest.mark.parametrize("page", [1, 3, forensics.PAGE])
@pytest.mark.parametrize("person", [MAYA, SAM])
def test_issue15_item7_the_streamed_export_is_the_whole_document_byte_for_byte(
    demo: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: int, person: str
) -> None:
    """The CLI contract's JSON does not change: whatever the page size, the file holds the
    exact text `json.dumps(indent=2)` gives for the document built whole."""
    monkeypatch.setattr(forensics, "PAGE", page)
    session = PersonSession(demo, PersonSession.open(demo, person).person, "staff:dana")
    whole = _held_whole(session)
    target = tmp_path / "export.json"
    assert forensics.write_export(session, target) == target
    text = target.read_text(encoding="utf-8")
    whole["exported_at"] = json.loads(text)["exported_at"]
    assert text == json.dumps(whole, indent=2, ensure_ascii=False) + "\n"
    assert len(whole["conversations"]) > 1 and any(c["turns"] for c in whole["conversations"])


def test_issue15_item7_export_to_a_stream_is_recorded_after_it_is_out(demo: Store) -> None:
    session = PersonSession(demo, MAYA, "staff:dana")
    before = len(_exports(demo, MAYA))
    out = io.StringIO()
    forensics.export_to(session, out)
    data = json.loads(out.getvalue())
    assert data["person"] == MAYA and data["exported_by"] == "staff:dana"
    assert _exports(demo, MAYA)[before:] == [{"what": "export", "to": "stdout"}]
    row = forensics.audit_log(session)[-1]
    assert (row["actor"], row["type"]) == ("staff:dana", "exported")
    assert row["action"] == row["said"] == "exported everything kept, as JSON, to standard output"
    assert data["audit"][-1]["seq"] == row["seq"] - 1  # recorded after it was written


def test_issue15_item7_a_stream_that_cannot_carry_unicode_gets_escapes(demo: Store) -> None:
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="ascii")
    forensics.export_to(PersonSession(demo, MAYA, MAYA), out)
    text = raw.getvalue().decode("ascii")
    assert "\\u" in text  # the demo's French and its “quotes”
    assert json.loads(text)["person"] == MAYA


def test_issue15_item7_file_export_is_owner_only_and_recorded_without_its_path(
    demo: Store, tmp_path: Path
) -> None:
    session = PersonSession(demo, MAYA, "staff:dana")
    target = tmp_path / "maya-at-the-clinic.json"
    target.write_text("{}")
    target.chmod(0o644)
    before = len(_exports(demo, MAYA))
    forensics.write_export(session, target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == [target.name]  # no temporary left
    assert _exports(demo, MAYA)[before:] == [{"what": "export", "to": "file"}]
    assert forensics.audit_log(session)[-1]["action"] == (
        "exported everything kept, as JSON, to a file"
    )


def test_issue15_item7_a_cancelled_export_writes_and_records_nothing(
    demo: Store, tmp_path: Path
) -> None:
    before = len(_exports(demo, MAYA))
    target = tmp_path / "export.json"
    written = forensics.write_export(
        PersonSession(demo, MAYA, MAYA), target, cancelled=lambda: True
    )
    assert written is None and list(tmp_path.iterdir()) == []
    assert len(_exports(demo, MAYA)) == before


def test_issue15_item7_a_write_that_fails_leaves_no_file_and_no_record(
    demo: Store, tmp_path: Path
) -> None:
    before = len(_exports(demo, MAYA))
    with pytest.raises(InvalidInput, match="does not exist; choose another place"):
        forensics.write_export(PersonSession(demo, MAYA, MAYA), tmp_path / "gone" / "x.json")
    with pytest.raises(InvalidInput, match="is a folder; give a file name"):
        forensics.write_export(PersonSession(demo, MAYA, MAYA), tmp_path)
    assert list(tmp_path.iterdir()) == [] and len(_exports(demo, MAYA)) == before


def test_issue15_item7_a_file_that_cannot_be_put_in_place_is_recorded_as_failed(
    demo: Store, tmp_path: Path
) -> None:
    """The export is recorded once its bytes are complete, then renamed into place; if
    the rename fails (here a folder appears at the target meanwhile), a second record says
    so, so the audit log never claims a file that is not there."""
    session = PersonSession(demo, MAYA, "staff:dana")
    target = tmp_path / "export.json"
    before = len(_exports(demo, MAYA))

    def progress(done: int, total: int) -> None:
        if done == total:  # the last conversation: a folder takes the name
            target.mkdir()
            (target / "inside").write_text("x")

    with pytest.raises(InvalidInput, match=r"could not be written to .*Nothing was written"):
        forensics.write_export(session, target, progress)
    assert [p.name for p in tmp_path.iterdir()] == [target.name] and target.is_dir()
    assert _exports(demo, MAYA)[before:] == [
        {"what": "export", "to": "file"},
        {"what": "export", "to": "file", "failed": True},
    ]
    assert forensics.audit_log(session)[-1]["action"] == (
        "exporting everything kept, as JSON, to a file failed after it was recorded: "
        "nothing was written"
    )


# ---- the stream itself -------------------------------------------------------------------

_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=25,
)


def _made_lazy(value: Any, data: st.DataObject) -> Any:
    """The same document with some of its lists (at any depth) turned into Lazy ones."""
    if isinstance(value, list):
        items = [_made_lazy(item, data) for item in value]
        return Lazy(iter(items)) if data.draw(st.booleans()) else items
    if isinstance(value, dict):
        return {key: _made_lazy(item, data) for key, item in value.items()}
    return value


@settings(max_examples=200, deadline=None)
@given(document=_JSON, ascii_only=st.booleans(), data=st.data())
def test_issue15_item7_a_lazy_document_writes_exactly_what_json_dumps_writes(
    document: Any, ascii_only: bool, data: st.DataObject
) -> None:
    text = "".join(chunks(_made_lazy(document, data), ensure_ascii=ascii_only))
    assert text == json.dumps(document, indent=2, ensure_ascii=ascii_only)
    assert materialize(_made_lazy(document, data)) == document
