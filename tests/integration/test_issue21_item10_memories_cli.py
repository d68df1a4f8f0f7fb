"""Issue 21 item 10 on the command line: `engram memories import FILE --person P` makes
each memory of a list or a mem0 export a candidate to review, says what it added, skipped
and ignored, and refuses a broken file in one sentence, writing nothing (P7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def test_issue21_item10_memories_import_adds_candidates_and_says_so(
    cli: Any, tmp_path: Path
) -> None:
    assert cli("init").code == 0
    copied = tmp_path / "claude-memories.txt"
    copied.write_text("- Likes tea\n• Lives in Oslo\n\n- likes TEA\n-\n", encoding="utf-8")
    preview = cli("memories", "import", str(copied), "--person", "ana", "--preview")
    assert preview.code == 0, preview.err
    assert "the file said it before" in preview.out
    assert cli("persons", "--json").json() == []  # a preview writes nothing

    done = cli("memories", "import", str(copied), "--person", "ana", "--source", "Claude")
    assert done.code == 0, done.err
    assert done.out.strip() == (
        "ana, from claude-memories.txt (text): 2 candidates added for review, "
        "1 duplicate skipped, 1 empty or ignored."
    )
    listed = cli("candidates", "list", "--person", "ana", "--json").json()
    assert [(c["text"], c["status"]) for c in listed] == [
        ("Likes tea", "pending"),
        ("Lives in Oslo", "pending"),
    ]
    assert listed[1]["imported"]["source"] == "Claude"
    assert listed[1]["imported"]["line"] == 2
    assert cli("notes", "list", "--person", "ana", "--json").json() == []

    again = cli("memories", "import", str(copied), "--person", "ana", "--json").json()
    assert (again["added"], again["duplicates"], again["candidates"]) == (0, 3, [])


def test_issue21_item10_memories_import_reads_mem0_and_refuses_broken_json(
    cli: Any, tmp_path: Path
) -> None:
    assert cli("init").code == 0
    export = tmp_path / "mem0.json"
    export.write_text(
        json.dumps({"results": [{"id": "m-1", "memory": "Is allergic to nuts"}]}),
        encoding="utf-8",
    )
    made = cli("memories", "import", str(export), "--person", "ana", "--json")
    assert made.code == 0, made.err
    answer = made.json()
    assert (answer["format"], answer["added"]) == ("mem0", 1)
    (candidate,) = cli("candidates", "list", "--person", "ana", "--json").json()
    assert candidate["imported"]["mem0_id"] == "m-1"
    assert candidate["sensitive"] is True  # health (P5), for a person to decide

    broken = tmp_path / "broken.json"
    broken.write_text('[{"id": "m-2", "memory": "Likes tea"}', encoding="utf-8")
    refused = cli("memories", "import", str(broken), "--person", "ana")
    assert refused.code != 0
    assert refused.err.strip().startswith("The file is not valid JSON")
    assert len(refused.err.strip().splitlines()) == 1
    assert len(cli("candidates", "list", "--person", "ana", "--json").json()) == 1
