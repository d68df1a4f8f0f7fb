"""Issue 18, "one home for every rule": the same rule on the CLI, HTTP, MCP and the window.

- item 7: the same text again is no change on any face (C5): the note keeps its id;
- item 8: R2's empty recall answer names the writing tool the agent really has, on every
  face, from one function.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from engram.api.app import build_app
from engram.control.notes import add_note, edit_note, get_note
from engram.control.session import PersonSession
from engram.mcp import tools as mcp
from engram.model.errors import InvalidInput
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime import api_keys
from engram.runtime.agents import set_agent
from engram.runtime.conversations import start_conversation
from engram.store.store import Store

ANA = PersonId("ana")
KEPT = "nothing has been kept about this person yet"  # R2's words, as the seed gives them


@pytest.fixture
def http(store: Store) -> Iterator[tuple[TestClient, str]]:
    _, key = api_keys.create_key(store, "backend", "ops")
    with TestClient(build_app(store)) as client:
        yield client, key


def _call(
    http: tuple[TestClient, str], method: str, path: str, agent: str, body: Any = None
) -> Any:
    client, key = http
    answer = client.request(
        method,
        f"/v1/memory/agents/{agent}/memory{path}",
        json=body,
        headers={"Authorization": f"Bearer {key}", "X-Engram-External-User-Id": "ana"},
    )
    assert answer.status_code < 300, answer.text
    return answer.json()


# ---- item 7 -------------------------------------------------------------------------------


def test_issue18_item7_C5_the_same_text_keeps_the_note_on_every_face(
    store: Store, cli: Any, http: tuple[TestClient, str]
) -> None:
    set_agent(store, "helper", {"memory": {"tools": {"update": True}}}, "ops")
    start_conversation(store, [ANA], agent="helper")  # ana is in the store from here
    session = PersonSession(store, ANA, ANA)
    note = add_note(session, "Plays the cello.", Kind.FACT, Scope.DIRECT)

    assert edit_note(session, note, text="  Plays the cello.  ") == note  # control
    run = cli("notes", "edit", "--person", "ana", note, "--text", "Plays the cello.", "--json")
    assert run.code == 0, run.err
    assert run.json()["id"] == note  # CLI
    patched = _call(http, "PATCH", f"/items/{note}", "helper", {"text": "Plays the cello."})
    assert patched["id"] == note  # HTTP
    assert get_note(session, note).is_active
    listed = cli("notes", "list", "--person", "ana", "--all", "--json").json()
    assert [n["id"] for n in listed] == [note]  # no closed version anywhere

    # The same words with another scope: a scope change on the same note, still no version.
    assert edit_note(session, note, text="Plays the cello.", scope=Scope.PORTABLE) == note
    assert get_note(session, note).scope is Scope.PORTABLE
    # Other words are a new version (C5), as before.
    assert edit_note(session, note, text="Plays the viola.") != note


# ---- item 8 -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tools", "named"),
    [({"remember": True}, "memory_remember"), ({}, None)],
    ids=["with-remember", "without"],
)
def test_issue18_item8_R2_the_empty_recall_names_the_real_tool_on_every_face(
    store: Store,
    cli: Any,
    http: tuple[TestClient, str],
    tools: dict[str, bool],
    named: str | None,
) -> None:
    set_agent(store, "helper", {"memory": {"tools": tools}}, "ops")
    conversation = start_conversation(store, [ANA], agent="helper").id
    expected = f"{KEPT} — {named} is how a note gets here" if named else KEPT

    over_http = _call(http, "POST", "/recall", "helper", {"conversation": conversation})
    bound = mcp.bind(store, "ana", conversation, None, None)
    over_mcp = mcp.call(bound, "memory_recall", {})
    run = cli("recall", "--person", "ana", "--conversation", conversation, "--json")
    assert run.code == 0, run.err
    answers = {"http": over_http, "mcp": over_mcp, "cli": run.json()}
    assert {face: a["message"] for face, a in answers.items()} == dict.fromkeys(answers, expected)
    assert all(a["notes"] == [] for a in answers.values())


# ---- item 6 -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "actor", ["anyone at all; DROP", "staff:" + "x" * 5_000, "staff:dana\nstaff:lee", ""]
)
def test_issue18_item6_C1_who_acts_is_checked_when_any_face_opens_a_session(
    store: Store, cli: Any, actor: str
) -> None:
    start_conversation(store, [ANA])
    note = add_note(PersonSession(store, ANA, ANA), "Plays the cello.", Kind.FACT, Scope.DIRECT)
    before = cli("audit", "--person", "ana", "--json").out
    for command in (
        ["notes", "edit", "--person", "ana", note, "--text", "Plays the viola."],
        [
            "notes",
            "add",
            "--person",
            "ana",
            "--text",
            "Sings.",
            "--kind",
            "fact",
            "--scope",
            "direct",
        ],
        ["notes", "delete", "--person", "ana", note],
    ):
        run = cli("--actor", actor, *command)
        if actor == "":  # an empty --actor is the default: the person themself
            continue
        assert run.code != 0, (command, run.out)
        assert "staff:" in run.err and run.err.count("\n") == 1, run.err  # one sentence
        assert cli("audit", "--person", "ana", "--json").out == before  # nothing recorded
    with pytest.raises(InvalidInput):
        PersonSession.open(store, "ana", actor or "someone else")


def test_issue18_item6_C1_the_actors_every_face_records_still_open(store: Store) -> None:
    start_conversation(store, [ANA])
    for actor in ("ana", "staff:dana", "api:k_0a1b2c", "agent:helper", None):
        assert PersonSession.open(store, "ana", actor).actor == (actor or "ana")
