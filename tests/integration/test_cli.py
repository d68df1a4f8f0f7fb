"""The CLI contract (DESIGN.md): names, flags, JSON keys, one-sentence errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

NOTE_KEYS = {
    "id",
    "person",
    "kind",
    "scope",
    "durability",
    "text",
    "confidence_bp",
    "valid_from",
    "valid_to",
    "status",
    "sources",
    "corroborators",
}


@pytest.fixture
def populated(cli: Any) -> dict[str, str]:
    assert cli("init", "--json").code == 0
    conversation = cli("conversation", "start", "--participants", "ana").out.strip()
    turn = cli(
        "conversation",
        "append",
        conversation,
        "--role",
        "user",
        "--author",
        "ana",
        "--text",
        "I moved to Oslo",
    ).out.strip()
    note = cli(
        "notes",
        "add",
        "--person",
        "ana",
        "--text",
        "Lives in Oslo",
        "--kind",
        "fact",
        "--scope",
        "direct",
        "--conversation",
        conversation,
    ).out.strip()
    return {"conversation": conversation, "turn": turn, "note": note}


def test_init_verify_persons(cli: Any, populated: dict[str, str]) -> None:
    report = cli("verify", "--json").json()
    assert report["ok"] is True and report["problems"] == [] and report["warnings"] == []
    assert report["chains"] == 3  # ana's journal, the conversation's log and the ledger
    people = cli("persons", "--json").json()
    assert people == [{"id": "ana", "active_notes": 1, "notes": 1, "conversations": 1}]


def test_notes_list_show_edit_delete(cli: Any, populated: dict[str, str]) -> None:
    [note] = cli("notes", "list", "--person", "ana", "--json").json()
    assert set(note) >= NOTE_KEYS
    assert note["sources"] == [
        {"conversation": populated["conversation"], "turn": None, "at": note["sources"][0]["at"]}
    ]
    detail = cli("notes", "show", populated["note"], "--person", "ana", "--json").json()
    assert {"versions", "sources", "corroborators", "usage", "confidence"} <= set(detail)
    edited = cli(
        "notes", "edit", populated["note"], "--person", "ana", "--text", "Lives in Bergen"
    ).out.strip()
    assert edited.startswith("n_") and edited != populated["note"]
    cli("notes", "edit", edited, "--person", "ana", "--scope", "portable")
    result = cli("notes", "delete", edited, "--person", "ana", "--reason", "moved again")
    assert result.code == 0
    everything = cli("notes", "list", "--person", "ana", "--all", "--json").json()
    assert [n["status"] for n in everything] == ["corrected", "deleted"]
    past = cli(
        "notes", "list", "--person", "ana", "--as-of", everything[0]["valid_from"], "--json"
    ).json()
    assert [n["text"] for n in past] == ["Lives in Oslo"]


def test_assemble_and_recall_json(cli: Any, populated: dict[str, str]) -> None:
    block = cli(
        "assemble", "--person", "ana", "--conversation", populated["conversation"], "--json"
    ).json()
    assert {"block", "notes", "dropped"} <= set(block)
    assert "Lives in Oslo" in block["block"]
    recall = cli(
        "recall",
        "--person",
        "ana",
        "--conversation",
        populated["conversation"],
        "--limit",
        "3",
        "--json",
    ).json()
    assert recall["status"] == "ok" and recall["notes"][0]["text"] == "Lives in Oslo"


def test_conversation_delete_preview_then_delete(cli: Any, populated: dict[str, str]) -> None:
    c = populated["conversation"]
    preview = cli("conversation", "delete", c, "--person", "ana", "--preview", "--json").json()
    assert preview["deleted"] is False and [n["id"] for n in preview["closes"]] == [
        populated["note"]
    ]
    done = cli("conversation", "delete", c, "--person", "ana", "--json").json()
    assert done["deleted"] is True and done["report"]["raw_file_scan"]["found"] == 0
    assert cli("notes", "list", "--person", "ana", "--json").json() == []
    assert cli("conversations", "list", "--person", "ana", "--json").json() == []


def test_issue18_item5_C4_conversation_delete_of_a_shared_conversation(cli: Any) -> None:
    """Issue 18 item 5, C4 on the CLI: a person deletes a shared conversation for themself
    (the other keeps it and his note); --for-everyone is refused to a person in one
    sentence, and previewed by staff naming each person."""
    assert cli("init", "--json").code == 0
    c = cli("conversation", "start", "--participants", "ana,ben").out.strip()
    for who, said in (("ana", "I moved to Oslo"), ("ben", "I fly planes")):
        cli("conversation", "append", c, "--role", "user", "--author", who, "--text", said)
    for who, fact in (("ana", "Lives in Oslo"), ("ben", "Is a pilot")):
        cli(
            "notes", "add", "--person", who, "--text", fact, "--kind", "fact",
            "--scope", "direct", "--conversation", c,
        )  # fmt: skip
    bens = cli("notes", "list", "--person", "ben", "--json").json()
    refused = cli("conversation", "delete", c, "--person", "ana", "--for-everyone")
    assert refused.code == 1 and refused.out == ""
    assert refused.err.strip().endswith(
        "is shared with ben, so only support staff may delete it for everyone; delete it "
        "for yourself, or ask support to."
    )
    staff = cli(
        "--actor", "staff:dana", "conversation", "delete", c, "--person", "ana",
        "--for-everyone", "--preview",
    )  # fmt: skip
    assert staff.code == 0 and "for everyone in it" in staff.out
    assert " For ana" in staff.out and " For ben" in staff.out and "Is a pilot" in staff.out
    preview = cli("conversation", "delete", c, "--person", "ana", "--preview", "--json").json()
    assert preview["for_everyone"] is False and preview["kept_by"] == ["ben"]
    assert [n["text"] for n in preview["closes"]] == ["Lives in Oslo"]
    done = cli("conversation", "delete", c, "--person", "ana")
    assert (
        done.code == 0
        and "for ana: ana's turns are excised from it" in done.out
        and "ben keeps it" in done.out
    )
    assert cli("notes", "list", "--person", "ben", "--json").json() == bens
    assert cli("notes", "list", "--person", "ana", "--json").json() == []
    assert cli("conversations", "list", "--person", "ana", "--json").json() == []
    assert [r["id"] for r in cli("conversations", "list", "--person", "ben", "--json").json()] == [
        c
    ]
    assert cli("verify", "--json").json()["ok"] is True


def test_erase_person_and_export(cli: Any, populated: dict[str, str]) -> None:
    exported = json.loads(cli("export", "--person", "ana").out)
    assert exported["notes"][0]["text"] == "Lives in Oslo"
    refused = cli("person", "erase", "ana", "--confirm", "bob", "--json")
    assert refused.code != 0 and "nothing was erased" in refused.json()["error"]
    report = cli("person", "erase", "ana", "--confirm", "ana", "--json").json()
    assert report["raw_file_scan"]["found"] == 0 and "person:ana" in report["keys_destroyed"]
    gone = cli("notes", "list", "--person", "ana", "--json")
    assert gone.code == 1 and gone.json() == {"error": "There is no person 'ana' in this store."}
    assert cli("verify", "--json").json()["ok"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("notes", "show", "n_nope", "--person", "ana", "--json"), "There is no note 'n_nope'"),
        (
            (
                "notes",
                "add",
                "--person",
                "ana",
                "--text",
                "x",
                "--kind",
                "mood",
                "--scope",
                "direct",
                "--json",
            ),
            "'mood' is not a kind",
        ),
        (
            ("notes", "list", "--person", "ana", "--as-of", "yesterday", "--json"),
            "is not an ISO-8601 time",
        ),
        (
            (
                "conversation",
                "append",
                "c_nope",
                "--role",
                "user",
                "--author",
                "ana",
                "--text",
                "hi",
                "--json",
            ),
            "There is no conversation",
        ),
    ],
)
def test_errors_are_one_sentence_with_json(
    cli: Any, populated: dict[str, str], args: tuple[str, ...], message: str
) -> None:
    result = cli(*args)
    assert result.code == 1
    assert message in result.err and result.err.count("\n") == 1
    assert message in result.json()["error"]


def test_wrong_passphrase_and_missing_store(
    cli: Any, populated: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_PASSPHRASE", "wrong")
    wrong = cli("persons", "--json")
    assert wrong.code == 1 and "passphrase does not open" in wrong.json()["error"]
    missing = cli("persons", store=Path("/nonexistent/x.engram"))
    assert missing.code == 1 and "There is no store" in missing.err


def test_console_script_runs_and_reports_usage_errors(tmp_path: Path) -> None:
    env = {**os.environ, "ENGRAM_STORE": str(tmp_path / "none.engram")}
    done = subprocess.run(
        [sys.executable, "-m", "engram", "persons"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 1 and "There is no store" in done.stderr
    usage = subprocess.run(
        [sys.executable, "-m", "engram", "frobnicate"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert usage.returncode == 2 and "invalid choice" in usage.stderr


def test_desk_without_a_display_says_what_to_do_instead(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    done = subprocess.run(
        [sys.executable, "-m", "engram", "desk", str(tmp_path / "x.engram")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 4  # its own code (issue 20 item 9), not a usage mistake's 2
    assert "$E notes list" in done.stderr and "xvfb-run -a engram" not in done.stderr
    assert "Traceback" not in done.stderr


def test_history_commands(cli: Any, populated: dict[str, str]) -> None:
    c = populated["conversation"]
    call = cli(
        "conversation",
        "tool",
        c,
        "--name",
        "weather",
        "--args",
        '{"city": "Oslo"}',
        "--result",
        "Oslo: 3°C and sleet",
    ).out.strip()
    assert call.startswith("k_")
    found = cli("conversation", "find", c, "oslo", "--json").json()
    assert {(m["kind"], m.get("turn_id") or m["call_id"]) for m in found["matches"]} == {
        ("turn", populated["turn"]),
        ("tool_result", call),
    }
    turn = cli("conversation", "read-turn", c, populated["turn"], "--json").json()
    assert turn["text"] == "I moved to Oslo"
    assert cli("conversation", "read-tool-result", c, call, "--json").json()["result"] == (
        "Oslo: 3°C and sleet"
    )
    assert (
        cli("--actor", "staff:dana", "conversation", "excise", c, call, "--reason", "test").code
        == 0
    )
    removed = cli("conversation", "read-tool-result", c, call, "--json").json()
    assert removed["removed"] is True and "result" not in removed
    missing = cli("conversation", "read-turn", c, "t_nope", "--json")
    assert missing.code == 1 and "There is no turn" in missing.json()["error"]
    bad = cli("conversation", "tool", c, "--name", "x", "--args", "{nope", "--result", "r")
    assert bad.code == 1 and "--args must be JSON" in bad.err
    assert cli("verify", "--json").json()["ok"] is True


TRANSCRIPT = [
    {"type": "conversation", "participants": ["ana", "ben"], "surface": "chat", "agent": "helper"},
    {"type": "turn", "role": "user", "author": "ana", "text": "Shall we plan the trip?"},
    {"type": "tool", "name": "calendar", "args": {"month": "May"}, "result": "May 3-5 free"},
    {"type": "turn", "role": "assistant", "author": "helper", "text": "May 3-5 works."},
    {"type": "conversation", "participants": ["ben"], "incognito": True},
    {
        "type": "turn",
        "role": "user",
        "author": "ben",
        "text": "Private thought.",
        "status": "failed",
    },
]


def _write(path: Path, records: list[Any], extra: str = "") -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n" + extra, "utf-8")
    return path


def test_import_round_trips_a_jsonl_transcript(cli: Any, tmp_path: Path) -> None:
    assert cli("init").code == 0
    result = cli("import", str(_write(tmp_path / "t.jsonl", TRANSCRIPT)), "--json").json()
    first, second = result["conversations"]
    listed = cli("conversations", "list", "--person", "ben", "--json").json()
    assert {c["id"] for c in listed} == {first, second}
    assert [c["incognito"] for c in listed] == [False, True]
    found = cli("conversation", "find", first, "trip", "--json").json()
    turn = cli("conversation", "read-turn", first, found["matches"][0]["turn_id"], "--json").json()
    assert turn["text"] == "Shall we plan the trip?"
    calls = cli("conversation", "find", first, "May", "--mode", "pattern", "--json").json()
    assert len(calls["matches"]) == 2  # the tool result and the assistant's answer
    assert cli("verify", "--json").json()["ok"] is True


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("{not json", "Line 7: not valid JSON"),
        (
            '{"type": "turn", "role": "robot", "author": "ana", "text": "x"}',
            "Line 7: 'role' must be user or assistant",
        ),
        (
            '{"type": "turn", "role": "user", "author": "zoe", "text": "x"}',
            "Line 7: 'zoe' is not a participant",
        ),
        ('{"type": "meme"}', "Line 7: 'type' must be"),
    ],
)
def test_import_refuses_a_bad_line_and_imports_nothing(
    cli: Any, tmp_path: Path, bad_line: str, message: str
) -> None:
    assert cli("init").code == 0
    result = cli("import", str(_write(tmp_path / "t.jsonl", TRANSCRIPT, bad_line)), "--json")
    assert result.code == 1 and message in result.err and "nothing was imported" in result.err
    assert cli("persons", "--json").json() == []
