"""Issue 21 item 7 on the CLI: `engram notes bulk` lists what it would do and changes
nothing without --yes; with it, forgets every note about a phrase in one go."""

from __future__ import annotations

from typing import Any


def _add(cli: Any, text: str) -> str:
    args = ["--person", "ana", "--text", text, "--kind", "fact", "--scope", "direct"]
    result = cli("notes", "add", *args)
    assert result.code == 0, result.err
    return str(result.out.strip())


def test_issue21_item7_notes_bulk_previews_then_forgets(cli: Any) -> None:
    assert cli("init", "--json").code == 0
    first = _add(cli, "Sings in the Oslo choir.")
    second = _add(cli, "Moved to Oslo in May.")
    kept = _add(cli, "Likes tea.")
    shown = cli("notes", "bulk", "forget", "--about", "oslo", "--person", "ana", "--json")
    assert shown.code == 0, shown.err
    preview = shown.json()
    assert preview["applied"] is False
    assert {n["id"] for n in preview["notes"]} == {first, second}
    listed = cli("notes", "list", "--person", "ana", "--json").json()
    assert {n["id"] for n in listed} == {first, second, kept}  # nothing changed yet

    done = cli("notes", "bulk", "forget", "--about", "oslo", "--person", "ana", "--yes")
    assert done.code == 0, done.err
    assert "2 notes forgotten" in done.out
    everything = cli("notes", "list", "--person", "ana", "--all", "--json").json()
    texts = {n["id"]: n["text"] for n in everything}
    assert texts[kept] == "Likes tea." and texts[first] is None and texts[second] is None
    assert cli("verify", "--json").json()["ok"] is True

    both = cli("notes", "bulk", "delete", "--about", "x", "--note", kept, "--person", "ana")
    assert both.code != 0 and "not both" in both.err


def test_issue21_item7_notes_undo_names_then_takes_back_a_whole_bulk_change(cli: Any) -> None:
    assert cli("init", "--json").code == 0
    ids = [_add(cli, f"Keeps bees number {i}.") for i in range(3)]
    notes = [a for i in ids for a in ("--note", i)]
    staff = ["--actor", "staff:dana"]
    assert cli("notes", "bulk", "delete", *notes, "--person", "ana", "--yes", *staff).code == 0
    assert cli("notes", "list", "--person", "ana", "--json").json() == []

    named = cli("notes", "undo", "--person", "ana", *staff)
    assert named.code == 0, named.err
    assert "Undo deletion of 3 notes, made " in named.out
    assert "Nothing was changed" in named.out
    assert cli("notes", "list", "--person", "ana", "--json").json() == []

    other = cli("notes", "undo", "--person", "ana", "--actor", "staff:lee")
    assert other.code != 0 and "no change by lee (staff)" in other.err

    done = cli("notes", "undo", "--person", "ana", "--yes", "--json", *staff)
    assert done.code == 0, done.err
    assert done.json()["notes"] == 3 and done.json()["applied"] is True
    listed = cli("notes", "list", "--person", "ana", "--json").json()
    assert {n["id"] for n in listed} == set(ids)
    again = cli("notes", "undo", "--person", "ana", *staff)
    assert again.code != 0 and "an undo itself is not undone" in again.err
