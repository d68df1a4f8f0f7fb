"""Any string from any face is either stored and exported round-trip, or refused in one
sentence (issue 9, item 10). Text that is not valid Unicode (a lone surrogate) is refused
at the store's seam, which sees the text itself before any JSON escaping; nothing written
can break `export` or `candidates list/get --json` afterwards."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from engram.api.app import build_app
from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.mcp import tools as mcp
from engram.model.errors import InvalidInput
from engram.model.events import EventType
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime import api_keys, memory_tools
from engram.runtime.agents import set_agent
from engram.runtime.context import Attribution
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.note_writes import NoteDraft, note_added, suggestion
from engram.store import journal
from engram.store.store import Store

ANA = PersonId("ana")
# Lone surrogates, separators and controls are what broke things; weigh them in.
AWKWARD = ["\ud800", "\udfff", "\udc80", "\udbff", "\u2028", "\u2029", "\x00", "\r", "\n",
           "\x85", "\ufeff", "\U0001f600", "é", " "]  # fmt: skip
TEXTS = st.text(
    alphabet=st.one_of(st.characters(exclude_categories=()), st.sampled_from(AWKWARD)),
    max_size=40,
)
EXAMPLES = settings(
    max_examples=10,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # no shrinking: each call is slow
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _valid(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _one_sentence(message: str) -> bool:
    return bool(message) and "\n" not in message.strip() and "Traceback" not in message


def _readable_afterwards(cli: Any, new: Collection[str] = ()) -> dict[str, Any]:
    """Everything kept about ana still exports, her candidates still list as JSON, and
    each new candidate still opens."""
    exported = cli("export", "--person", "ana")
    assert exported.code == 0, exported.err
    candidates = cli("candidates", "list", "--person", "ana", "--json")
    assert candidates.code == 0, candidates.err
    assert set(new) <= {c["id"] for c in candidates.json()}
    for candidate in new:
        got = cli("candidates", "get", candidate, "--person", "ana", "--json")
        assert got.code == 0, got.err
    data: dict[str, Any] = exported.json()
    return data


def test_issue9_item10_the_store_seam_refuses_a_lone_surrogate_before_escaping(
    store: Store,
) -> None:
    info = start_conversation(store, [ANA])
    for event in (
        note_added(NoteDraft("a lone \ud800", Kind.FACT, Scope.DIRECT), "ana", None, None),
        suggestion(
            NoteDraft("escaped \udc00 in JSON", Kind.FACT, Scope.DIRECT),
            "ana",
            "test",
            None,
            sensitive=False,
            ambiguous=False,
        )[1],
    ):
        with pytest.raises(InvalidInput, match="not valid Unicode"), store.write() as txn:
            journal.append(store, txn, ANA, [event])
    with pytest.raises(InvalidInput, match="not valid Unicode"):
        append_turn(store, info.id, role="user", author=ANA, text="\udcff")
    # a candidate's text is sealed inside JSON: the seam must still see the surrogate
    config = set_agent(store, "helper", {"memory": {"tools": {"remember": True}}}, "ops")
    answer = memory_tools.dispatch(
        store,
        Attribution(ANA, info.id),
        config,
        {"memory_remember"},
        "memory_remember",
        {"text": "bad \ud800 text", "kind": "fact"},
    )
    assert answer == {
        "error": "The text holds characters that are not valid Unicode; nothing was written."
    }
    with store.read() as conn:
        assert [e.type for e in journal.events(conn, ANA)] == [EventType.PERSON_CREATED]


@pytest.fixture
def faces(store: Store, store_path: Path) -> Iterator[dict[str, Any]]:
    """One store reached through the MCP tools (as the SDK's server hands them what a
    client sent) and the HTTP app (through a client nobody here wrote); the CLI fixture
    reaches the same file."""
    set_agent(store, "helper", {"memory": {"tools": {"remember": True, "update": True}}}, "ops")
    conversation = start_conversation(store, [ANA], agent="helper").id
    note = add_note(PersonSession(store, ANA, ANA), "Plays the cello.", Kind.FACT, Scope.DIRECT)
    _, key = api_keys.create_key(store, "backend", "ops")
    with TestClient(build_app(store)) as http:
        yield {
            "bound": mcp.bind(store, "ana", conversation, None, None),
            "conversation": conversation,
            "note": note,
            "http": http,
            "key": key,
        }


def _mcp(bound: mcp.Bound, name: str, **arguments: Any) -> dict[str, Any]:
    return mcp.call(bound, name, arguments)


def _http(faces: dict[str, Any], method: str, path: str, body: Any) -> tuple[int, Any]:
    answer = faces["http"].request(
        method,
        "/v1/memory/agents/helper/memory" + path,
        content=json.dumps(body).encode(),  # ASCII JSON: a surrogate travels as \ud800
        headers={
            "Authorization": f"Bearer {faces['key']}",
            "X-Engram-External-User-Id": "ana",
            "Content-Type": "application/json",
        },
    )
    return answer.status_code, answer.json()


def _check(
    stored: bool, text: str, refusal: str, kept: Callable[[], str | None], normal: str
) -> None:
    """Never stored when the text is not valid Unicode; a refusal is one sentence; what
    was stored reads back as written (`normal`: as the face tidies it, e.g. stripped)."""
    if not _valid(text):
        assert not stored and "not valid Unicode" in refusal
        return
    if stored:
        assert kept() == normal
    else:
        assert _one_sentence(refusal), refusal


@EXAMPLES
@given(text=TEXTS)
def test_issue9_item10_mcp_memory_remember_and_update(
    cli: Any, faces: dict[str, Any], text: str
) -> None:
    bound = faces["bound"]
    made: list[str] = []
    for name, extra in (("memory_remember", {"kind": "fact"}), ("memory_update_item", {})):
        if name == "memory_update_item":
            extra = {"item_id": faces["note"]}
        answer = _mcp(bound, name, text=text, **extra)
        candidate = answer.get("candidate")
        made += [candidate] if candidate else []
        _check(
            candidate is not None,
            text,
            answer.get("error", ""),
            lambda c=candidate: cli("candidates", "get", c, "--person", "ana", "--json").json()[
                "text"
            ],
            " ".join(text.split()),  # the memory tools fold whitespace
        )
    _readable_afterwards(cli, made)


@EXAMPLES
@given(text=TEXTS)
def test_issue9_item10_http_create_and_patch(cli: Any, faces: dict[str, Any], text: str) -> None:
    status, body = _http(faces, "POST", "/items", {"text": text, "kind": "fact"})
    _check(status == 201, text, body.get("error", ""), lambda: body["text"], text.strip())
    if status == 201:
        show = cli("notes", "show", body["id"], "--person", "ana", "--json").json()
        assert show["text"] == text.strip()
        status, patched = _http(faces, "PATCH", f"/items/{body['id']}", {"text": text + "!"})
        assert status == 200, patched
    _readable_afterwards(cli)


@EXAMPLES
@given(text=TEXTS)
def test_issue9_item10_cli_notes_and_turns(cli: Any, faces: dict[str, Any], text: str) -> None:
    add = cli("notes", "add", "--person", "ana", "--kind", "fact", "--scope", "direct",
              "--text", text)  # fmt: skip
    note = add.out.strip()
    _check(
        add.code == 0,
        text,
        add.err,
        lambda: cli("notes", "show", note, "--person", "ana", "--json").json()["text"],
        text.strip(),
    )
    turn = cli("conversation", "append", faces["conversation"], "--role", "user",
               "--author", "ana", "--text", text)  # fmt: skip
    turn_id = turn.out.strip()
    if turn.code == 0:
        read = cli("conversation", "read-turn", faces["conversation"], turn_id, "--json")
        assert read.json()["text"] == text
    else:
        assert not _valid(text) or _one_sentence(turn.err), turn.err
        assert _valid(text) or "not valid Unicode" in turn.err
    _readable_afterwards(cli)


@EXAMPLES
@given(text=TEXTS)
def test_issue9_item10_import(cli: Any, faces: dict[str, Any], tmp_path: Path, text: str) -> None:
    path = tmp_path / "t.jsonl"
    lines = [
        {"type": "conversation", "participants": ["ana"]},
        {"type": "turn", "role": "user", "author": "ana", "text": text},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", "utf-8")
    done = cli("import", str(path), "--json")
    if done.code == 0:
        (conversation,) = done.json()["conversations"]
        exported = _readable_afterwards(cli)
        (imported,) = [c for c in exported["conversations"] if c["id"] == conversation]
        assert [t["text"] for t in imported["turns"]] == [text]
    else:
        assert done.err.startswith("Line 2: ") and _one_sentence(done.err), done.err
        assert _valid(text) or "not valid Unicode" in done.err
        assert text == "" or not _valid(text)
        _readable_afterwards(cli)
