"""Imports and configuration files are strict (issue 9, item 9): each line or file is
checked against its declared model (model.wire) with no coercion, no unknown fields and
bounded nesting and numbers; a refusal names the line in one sentence and nothing is
written."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

CONVERSATION = {"type": "conversation", "participants": ["ana"]}
TURN = {"type": "turn", "role": "user", "author": "ana", "text": "Hello"}


def _jsonl(path: Path, *lines: Any) -> Path:
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n",
        "utf-8",
    )
    return path


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({**CONVERSATION, "incognito": "false"}, "Line 2: 'incognito' must be true or false"),
        ({**CONVERSATION, "agent": True}, "Line 2: 'agent' must be a string"),
        ({**CONVERSATION, "agent": "helper\n"}, "Line 2: 'helper\\n' is not an agent name"),
        ({**CONVERSATION, "participants": [["ana"]]}, "Line 2: item 1 of 'participants'"),
        ({**CONVERSATION, "participants": ["ana\n"]}, "is not a valid person id"),
        ({**CONVERSATION, "participants": "ana"}, "Line 2: 'participants' must be a list"),
        ({**CONVERSATION, "surface": ["chat"]}, "Line 2: 'surface' must be one of: chat,"),
        ({**CONVERSATION, "colour": "blue"}, "Line 2: unknown fields: colour"),
        ({**TURN, "status": ["committed"]}, "Line 2: 'status' must be one of"),
        ({**TURN, "status": {"a": 1}}, "Line 2: 'status' must be one of"),
        ({**TURN, "text": ["Hello"]}, "Line 2: 'text' must be a string"),
        ({**TURN, "author": {"id": "ana"}}, "Line 2: 'author' must be a string"),
        ({**TURN, "role": "robot"}, "Line 2: 'role' must be user or assistant"),
        ({"type": "tool", "name": "w", "args": [1], "result": "r"}, "'args' must be a JSON"),
        ({"type": "tool", "name": "w", "args": {}, "result": 5}, "'result' must be a string"),
        ({"no": "type"}, "Line 2: 'type' must be one of: conversation, turn or tool"),
        ([1, 2], "Line 2: not a JSON object"),
        ('{"type": "turn", "role": "user", "author": "ana", "text": "\\ud800"}',
         "not valid Unicode"),
    ],
)  # fmt: skip
def test_issue9_item9_a_wrong_type_is_refused_by_line_number_never_coerced(
    cli: Any, tmp_path: Path, bad: Any, message: str
) -> None:
    assert cli("init").code == 0
    path = _jsonl(tmp_path / "t.jsonl", CONVERSATION, bad)
    result = cli("import", str(path), "--json")
    assert result.code == 1 and "Traceback" not in result.err
    assert message in result.err, result.err
    assert result.err.strip().endswith("nothing was imported.")
    assert result.err.count("\n") == 1  # one sentence, one line
    assert cli("persons", "--json").json() == []


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ('{"type": "tool", "name": "w", "args": {"n": ' + "9" * 5_000 + '}, "result": "r"}',
         "Line 2: a number longer than 32 characters"),
        ('{"type": "tool", "name": "w", "args": ' + "[" * 9_000 + "]" * 9_000 + ', "result": 0}',
         "Line 2: arrays or objects nested more than 32 deep"),
        ('{"type": "conversation", "participants": ["ana"], "incognito": ' + "[" * 100_000,
         "Line 2: arrays or objects nested more than 32 deep"),
    ],
)  # fmt: skip
def test_issue9_item9_huge_numbers_and_deep_nesting_are_refused_before_parsing(
    cli: Any, tmp_path: Path, bad: str, message: str
) -> None:
    assert cli("init").code == 0
    path = _jsonl(tmp_path / "t.jsonl", CONVERSATION, bad)
    start = time.monotonic()
    result = cli("import", str(path))
    assert result.code == 1 and message in result.err, result.err
    assert time.monotonic() - start < 5
    assert cli("persons", "--json").json() == []


def test_issue9_item9_a_line_separator_inside_a_json_string_does_not_split_the_line(
    cli: Any, tmp_path: Path
) -> None:
    assert cli("init").code == 0
    text = "first\u2028second\u2029third\x85fourth"
    path = tmp_path / "t.jsonl"
    lines = [json.dumps(CONVERSATION), json.dumps({**TURN, "text": text}, ensure_ascii=False)]
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("utf-8"))
    (conversation,) = cli("import", str(path), "--json").json()["conversations"]
    (turn,) = cli("conversation", "find", conversation, "second", "--json").json()["matches"]
    shown = cli("conversation", "read-turn", conversation, turn["turn_id"], "--json").json()
    assert shown["text"] == text


def test_issue9_item9_the_good_shapes_still_import(cli: Any, tmp_path: Path) -> None:
    assert cli("init").code == 0
    path = _jsonl(
        tmp_path / "t.jsonl",
        {**CONVERSATION, "surface": "channel", "incognito": True, "agent": "helper.v2"},
        {**TURN, "status": "failed"},
        {"type": "tool", "name": "w", "args": {"deep": [[{"n": -1.5e3}]]}, "result": "ok"},
        {"type": "tool", "name": "w", "args": "raw text", "result": "ok"},
        {"type": "turn", "role": "assistant", "author": "helper", "text": "Hi"},
    )
    result = cli("import", str(path), "--json")
    assert result.code == 0, result.err
    assert cli("verify", "--json").json()["ok"] is True


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('{"memory": {"tools": {"search": "true"}}}', "memory.tools.search must be true or false"),
        ('{"memory": {"tools": {"writeScope": ["invocation-user"]}}}',
         "memory.tools.writeScope must be a string"),
        ('{"memory": {"learning": {"mode": {"is": "automatic"}}}}',
         "memory.learning.mode must be one of: off, suggest or automatic"),
        ('{"memory": {"learning": {"kinds": "fact"}}}', "memory.learning.kinds must be a list"),
        ('{"memory": {"tools": {"delete_all": true}}}', "memory.tools has unknown settings"),
        ('{"memory": {"x": ' + "9" * 5_000 + "}}", "a number longer than 32 characters"),
        ('{"memory": ' + "[" * 20_000 + "]" * 20_000 + "}", "nested more than 32 deep"),
        ("[]", "not a JSON object"),
        ("{nope", "not valid JSON"),
        ('{"memory": {"tools": {"search": true}}} trailing', "not valid JSON"),
    ],
)  # fmt: skip
def test_issue9_item9_agent_configuration_files_are_strict(
    cli: Any, tmp_path: Path, config: str, message: str
) -> None:
    assert cli("init").code == 0
    path = tmp_path / "agent.json"
    path.write_text(config, "utf-8")
    result = cli("agents", "set", "helper", "--config", str(path), "--json")
    assert result.code == 1 and "Traceback" not in result.err
    assert message in result.err and str(path) in result.err, result.err
    assert result.json() == {"error": result.err.strip()}
    assert cli("agents", "list", "--json").json() == []


def test_issue9_item9_legacy_files_keep_a_line_separator_inside_a_statement_and_name_lines(
    cli: Any, tmp_path: Path
) -> None:
    assert cli("init").code == 0
    assert cli("conversation", "start", "--participants", "ana").code == 0
    legacy = tmp_path / "memory.md"
    legacy.write_text("# Memory\n- Likes tea\u2028and scones\n- Lives in Oslo\n", "utf-8")
    made = cli("candidates", "import-legacy", str(legacy), "--person", "ana", "--json").json()
    assert [c["text"] for c in made["candidates"]] == ["Likes tea and scones", "Lives in Oslo"]
    legacy.write_text("- fine\n\n- a NUL \x00 in a text file\n", "utf-8")
    refused = cli("candidates", "import-legacy", str(legacy), "--person", "ana")
    assert refused.code == 1
    assert refused.err.startswith("Line 3: the statement holds control characters")
    legacy.write_text("- fine\n- " + "x" * 400 + "\n", "utf-8")
    refused = cli("candidates", "import-legacy", str(legacy), "--person", "ana")
    assert refused.code == 1 and "Line 2: 'statement' is longer than 300" in refused.err
    assert len(cli("candidates", "list", "--person", "ana", "--json").json()) == 2
