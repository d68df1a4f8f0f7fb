"""Issue 8 item 11: writing a person's first note (or importing their legacy file) from the
command line creates the person, as the HTTP face does, and a failed write creates nobody."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engram.model.events import EventType
from engram.model.ids import person_id
from engram.store import journal
from engram.store.store import Store
from tests.conftest import PASSPHRASE


def _people(cli: Any) -> list[str]:
    return [p["id"] for p in cli("persons", "--json").json()]


def test_item11_notes_add_for_an_unseen_person_creates_them(cli: Any, store_path: Path) -> None:
    assert cli("init").code == 0
    add = ["--person", "zoe", "--kind", "fact", "--scope", "direct", "--text", "Plays cello."]
    made = cli("--actor", "staff:dana", "notes", "add", *add)
    assert made.code == 0, made.err
    assert _people(cli) == ["zoe"]
    (note,) = cli("notes", "list", "--person", "zoe", "--json").json()
    assert note["text"] == "Plays cello." and note["id"] == made.out.strip()
    store = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        with store.read() as conn:
            events = list(journal.events(conn, person_id("zoe")))
    finally:
        store.close()
    assert [(e.type, e.actor) for e in events] == [
        (EventType.PERSON_CREATED, "staff:dana"),
        (EventType.NOTE_ADDED, "staff:dana"),
    ]
    assert cli("verify", "--json").json()["ok"] is True


def test_item11_a_failed_first_note_creates_nobody(cli: Any) -> None:
    assert cli("init").code == 0
    bad = ["--person", "zoe", "--kind", "fact", "--scope", "direct", "--text", "x"]
    failed = cli("notes", "add", *bad, "--conversation", "c_0000000000000000")
    assert failed.code != 0 and "Traceback" not in failed.err
    bad_kind = ["--person", "zoe", "--kind", "rumour", "--scope", "direct", "--text", "x"]
    assert cli("notes", "add", *bad_kind).code != 0
    assert _people(cli) == []


def test_item11_import_legacy_for_an_unseen_person_creates_them(cli: Any, tmp_path: Path) -> None:
    assert cli("init").code == 0
    legacy = tmp_path / "memory.md"
    legacy.write_text("# Memory\n- Likes tea\n")
    made = cli("candidates", "import-legacy", str(legacy), "--person", "zoe", "--json")
    assert made.code == 0, made.err
    assert [c["text"] for c in made.json()["candidates"]] == ["Likes tea"]
    assert _people(cli) == ["zoe"]
    empty = tmp_path / "empty.md"
    empty.write_text("# Nothing here\n")
    assert cli("candidates", "import-legacy", str(empty), "--person", "yan").code != 0
    assert _people(cli) == ["zoe"]
