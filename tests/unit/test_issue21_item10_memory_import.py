"""Issue 21 item 10: memories kept elsewhere — a plain list copied out of another
assistant's memory page, a Markdown file of them, mem0's export — come in as candidates
for review, never as notes, each with where it came from; duplicates are skipped and
counted; a file that cannot be read whole writes nothing (P7, P5 for the sensitive ones)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engram.control import candidates, notes
from engram.control.memory_import import MAX_FILE_BYTES, import_memories, preview_memories
from engram.control.session import PersonSession
from engram.model.errors import InvalidInput
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.store import journal
from engram.store.store import Store

ANA = PersonId("ana")


@pytest.fixture
def session(store: Store) -> PersonSession:
    notes.add_note(
        PersonSession.open_new(store, ANA, "staff:ops"),
        "Lives in Porto.",
        Kind.FACT,
        Scope.DIRECT,
        create_person=True,
    )
    return PersonSession.open(store, ANA, "staff:ops")


def _file(tmp_path: Path, name: str, content: str) -> Path:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


def _candidates(session: PersonSession) -> list[dict[str, Any]]:
    return candidates.list_candidates(session)


def _note_texts(session: PersonSession) -> list[str]:
    return sorted(v.text or "" for v in notes.list_notes(session))


def _head(session: PersonSession) -> int:
    with session.store.read() as conn:
        return journal.head_seq(conn, session.person)


def test_issue21_item10_a_plain_list_becomes_candidates_with_their_source_never_notes(
    session: PersonSession, tmp_path: Path
) -> None:
    copied = "\n".join(
        [
            "Prefers short answers.",
            "- Has a dog called Rex",
            "* Works night shifts",
            "• Is learning Portuguese",
            "",
            "1. Plays the cello",
            "2) Owes Sam 50 euros",
            "[ ] Wants a reminder to renew the passport",
            "- ",
        ]
    )
    path = _file(tmp_path, "chatgpt-memories.txt", copied)
    done = import_memories(session, path, source="ChatGPT")

    assert done.format == "text"
    assert (len(done.added), len(done.duplicates), done.ignored) == (7, 0, 1)
    assert done.summary(True) == (
        "7 candidates added for review, 0 duplicates skipped, 1 empty or ignored."
    )
    found = _candidates(session)
    assert [c["text"] for c in found] == [
        "Prefers short answers.",
        "Has a dog called Rex",
        "Works night shifts",
        "Is learning Portuguese",
        "Plays the cello",
        "Owes Sam 50 euros",
        "Wants a reminder to renew the passport",
    ]
    assert sorted(done.added) == sorted(c["id"] for c in found)
    assert {(c["status"], c["scope"], c["extractor"], c["suggested_by"]) for c in found} == {
        ("pending", "direct", "memory-import", "staff:ops")
    }
    assert [c["imported"]["line"] for c in found] == [1, 2, 3, 4, 6, 7, 8]
    first = found[0]["imported"]
    assert {k: first[k] for k in ("file", "format", "source")} == {
        "file": "chatgpt-memories.txt",
        "format": "text",
        "source": "ChatGPT",
    }
    assert first["imported_at"].startswith("20")
    assert found[0]["kind"] == "preference"
    # P5: a sensitive one carries its category, as a learned suggestion does
    owes = next(c for c in found if c["text"].startswith("Owes"))
    assert (owes["sensitive"], owes["category"]) == (True, "money")
    assert _note_texts(session) == ["Lives in Porto."]  # nothing became a note


def test_issue21_item10_markdown_list_items_with_their_headings_code_ignored(
    session: PersonSession, tmp_path: Path
) -> None:
    markdown = """# About Ana

Here is what I remember:

- Lives with **two** cats
  named Miso and Tofu
- Family:
  - Has a brother, Rui
  - Her mother lives in Braga

## Work

1. Works as a nurse
2. Prefers `email` to calls

```
- not a memory
# nor a heading
```

> a quote, no memory
"""
    path = _file(tmp_path, "memory.md", markdown)
    done = import_memories(session, path)

    assert done.format == "markdown"
    found = {c["text"]: c["imported"] for c in _candidates(session)}
    assert list(found) == [
        "Lives with two cats named Miso and Tofu",
        "Family:",
        "Has a brother, Rui",
        "Her mother lives in Braga",
        "Works as a nurse",
        "Prefers email to calls",
    ]
    assert found["Has a brother, Rui"]["heading"] == "About Ana"
    assert found["Has a brother, Rui"]["under"] == "Family:"
    assert found["Works as a nurse"]["heading"] == "About Ana › Work"
    assert found["Works as a nurse"]["line"] == 13
    assert "under" not in found["Works as a nurse"]
    assert not any("not a memory" in text or "heading" in text for text in found)
    # two headings, the prose, the code block's four lines, the quote
    assert done.ignored == 8
    assert _note_texts(session) == ["Lives in Porto."]


@pytest.mark.parametrize("shape", ["results", "list"])
def test_issue21_item10_mem0_export_both_shapes_keep_id_time_and_categories(
    session: PersonSession, tmp_path: Path, shape: str
) -> None:
    results = [
        {
            "id": "7f1c-aa",
            "memory": "Is vegetarian",
            "hash": "h1",
            "metadata": None,
            "categories": ["food", "health"],
            "user_id": "ana@example",
            "created_at": "2025-03-01T10:00:00-08:00",
            "updated_at": "2025-04-02T10:00:00-08:00",
        },
        {"id": "9b2d-bb", "memory": "Supports FC Porto", "created_at": "2025-03-02T10:00:00"},
        {"id": "0000-cc", "memory": "   "},
        "not an entry",
    ]
    data: Any = {"results": results, "count": 4} if shape == "results" else results
    path = _file(tmp_path, "mem0-export.json", json.dumps(data))
    done = import_memories(session, path)

    assert (done.format, len(done.added), done.ignored) == ("mem0", 2, 2)
    found = {c["text"]: c["imported"] for c in _candidates(session)}
    veg = found["Is vegetarian"]
    assert veg["mem0_id"] == "7f1c-aa"
    assert veg["created_at"] == "2025-03-01T10:00:00-08:00"
    assert veg["categories"] == ["food", "health"]
    assert (veg["file"], veg["format"]) == ("mem0-export.json", "mem0")
    assert found["Supports FC Porto"]["mem0_id"] == "9b2d-bb"
    assert _note_texts(session) == ["Lives in Porto."]


def test_issue21_item10_format_is_detected_from_content_or_given(
    session: PersonSession, tmp_path: Path
) -> None:
    exported = _file(tmp_path, "export.txt", json.dumps([{"id": "x1", "memory": "Likes jazz"}]))
    assert preview_memories(session, exported).format == "mem0"
    headed = _file(tmp_path, "notes.txt", "# Ana\n- Likes jazz\n")
    assert preview_memories(session, headed).format == "markdown"
    assert preview_memories(session, headed, "text").format == "text"
    with pytest.raises(InvalidInput, match="not a memory format"):
        preview_memories(session, headed, "yaml")


def test_issue21_item10_duplicates_of_notes_candidates_and_the_file_are_skipped(
    session: PersonSession, tmp_path: Path
) -> None:
    path = _file(tmp_path, "list.txt", "- lives in  porto.\n- Likes jazz\n- LIKES JAZZ\n")
    done = import_memories(session, path)
    assert [c["text"] for c in _candidates(session)] == ["Likes jazz"]
    assert [(p.text, p.duplicate_of) for p in done.duplicates] == [
        ("lives in porto.", "note"),
        ("LIKES JAZZ", "file"),
    ]
    assert done.summary(True).startswith("1 candidate added for review, 2 duplicates skipped")

    before = _head(session)
    again = import_memories(session, path)  # re-importing adds nothing
    assert again.added == []
    assert [p.duplicate_of for p in again.planned] == ["note", "candidate", "candidate"]
    assert len(_candidates(session)) == 1
    assert _head(session) == before


def test_issue21_item10_a_file_that_cannot_be_read_whole_writes_nothing(
    session: PersonSession, tmp_path: Path
) -> None:
    before = (_head(session), len(_candidates(session)))
    broken = _file(tmp_path, "mem0.json", '{"results": [{"id": "a", "memory": "Likes tea"},')
    with pytest.raises(InvalidInput) as refused:
        import_memories(session, broken)
    message = str(refused.value)
    assert message.startswith("The file is not valid JSON (line 1")
    assert "\n" not in message and message.endswith("nothing was imported.")

    long_line = _file(tmp_path, "long.txt", "- Likes tea\n- " + "x" * 400 + "\n")
    with pytest.raises(InvalidInput, match=r"^Line 2 holds 400 characters; a memory may hold"):
        import_memories(session, long_line)

    wrong_shape = _file(tmp_path, "other.json", '{"memories_of": []}')
    with pytest.raises(InvalidInput, match="not a mem0 export"):
        import_memories(session, wrong_shape)

    huge = tmp_path / "huge.txt"
    huge.write_bytes(b"- Likes tea\n" * (MAX_FILE_BYTES // 12 + 1))
    with pytest.raises(InvalidInput, match="a memory file may be at most"):
        import_memories(session, huge)

    assert (_head(session), len(_candidates(session))) == before


def test_issue21_item10_preview_writes_nothing(session: PersonSession, tmp_path: Path) -> None:
    path = _file(tmp_path, "list.txt", "- Likes jazz\n- Lives in Porto.\n")
    before = _head(session)
    plan = preview_memories(session, path)
    assert [(p.text, p.duplicate_of) for p in plan.planned] == [
        ("Likes jazz", None),
        ("Lives in Porto.", "note"),
    ]
    assert plan.summary(False) == (
        "1 candidate to add for review, 1 duplicate skipped, 0 empty or ignored."
    )
    assert _head(session) == before and _candidates(session) == []


def test_issue21_item10_an_import_that_committed_meanwhile_makes_these_duplicates(
    session: PersonSession, store_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engram.control import memory_import
    from tests.conftest import PASSPHRASE

    path = _file(tmp_path, "list.txt", "- Likes jazz\n- Plays chess\n")
    previewed = memory_import.preview_memories
    calls: list[int] = []

    def overtaken(*args: Any, **kwargs: Any) -> Any:
        plan = previewed(*args, **kwargs)  # seen before the other window's import commits
        calls.append(1)
        if len(calls) == 1:
            other = Store.open(str(store_path), passphrase=PASSPHRASE)
            try:
                import_memories(PersonSession.open(other, ANA, "staff:other"), path)
            finally:
                other.close()
        return plan

    monkeypatch.setattr(memory_import, "preview_memories", overtaken)
    done = import_memories(session, path)
    assert done.added == []
    assert [p.duplicate_of for p in done.planned] == ["candidate", "candidate"]
    assert [c["suggested_by"] for c in _candidates(session)] == ["staff:other"] * 2
