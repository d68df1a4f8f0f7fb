"""Issue 19 item 3, the HTTP face keeps up with its framework: a 405 says which methods the
path does answer (RFC 9110 §15.5.6: the Allow header is required), and a writer that lost
a race on an item gets 409 with one sentence."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from engram.api.app import build_app
from engram.control import notes
from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.notes import Note
from engram.model.scope import Kind, Scope
from engram.runtime import api_keys
from engram.runtime.agents import set_agent
from engram.store.store import Store
from tests.integration.test_http_api import Client, running

ANA = PersonId("ana")


def test_issue19_item3_a_405_carries_allow(store: Store) -> None:
    _, key = api_keys.create_key(store, "backend", "ops")
    with TestClient(build_app(store)) as client:
        answer = client.put(
            "/v1/memory/agents/helper/memory/items",
            headers={"Authorization": f"Bearer {key}", "X-Engram-External-User-Id": "ana"},
        )
    assert answer.status_code == 405
    allowed = {m.strip() for m in answer.headers["allow"].split(",")}
    assert {"GET", "POST"} <= allowed and "PUT" not in allowed
    assert answer.json()["error"].endswith("does not answer PUT.")


def _racing(
    store: Store, monkeypatch: pytest.MonkeyPatch, loser: Callable[[Client], tuple[int, Any]]
) -> tuple[int, Any]:
    """`loser` reads the note (it is open), then waits while a second request deletes it,
    then writes: it lost the race. Returns its answer."""
    set_agent(store, "helper", {"memory": {"tools": {"remember": True}}}, "ops")
    _, key = api_keys.create_key(store, "backend", "ops")
    session = PersonSession(store, ANA, ANA)
    note = add_note(session, "Plays the cello.", Kind.FACT, Scope.DIRECT, create_person=True)
    first_read, winner_done = threading.Event(), threading.Event()
    real = notes.get_note
    calls = [0]

    def paused(session: PersonSession, note_id: str) -> Note:
        found = real(session, note_id)
        calls[0] += 1
        if calls[0] == 1:  # the loser has read the note open; let the winner go first
            first_read.set()
            assert winner_done.wait(10)
        return found

    monkeypatch.setattr(notes, "get_note", paused)
    with running(build_app(store)) as base:
        answers: list[tuple[int, Any]] = []
        racer = threading.Thread(target=lambda: answers.append(loser(Client(base, key))))
        racer.start()
        assert first_read.wait(10)
        won = Client(base, key)("DELETE", f"{ITEMS}/{note}", {"reason": "old"})
        assert won[0] == 200, won
        winner_done.set()
        racer.join(10)
    (answer,) = answers
    return answer


ITEMS = "/v1/memory/agents/helper/memory/items"


@pytest.mark.parametrize("loser", ["delete", "patch text", "patch scope"])
def test_issue19_item3_a_lost_race_on_an_item_is_409_in_one_sentence(
    store: Store, monkeypatch: pytest.MonkeyPatch, loser: str
) -> None:
    """Two writers on one note: the one whose write comes second gets 409 and a sentence
    about the note's state (it was 403 with the journal's wording)."""

    def send(client: Client) -> tuple[int, Any]:
        note = next(iter(client("GET", ITEMS)[1]["items"]))["id"]
        if loser == "delete":
            return client("DELETE", f"{ITEMS}/{note}", {})
        body = {"text": "Plays the viola."} if loser == "patch text" else {"scope": "portable"}
        return client("PATCH", f"{ITEMS}/{note}", body)

    status, body = _racing(store, monkeypatch, send)
    assert status == 409, body
    assert body["error"] == (
        "The note “Plays the cello.” is already closed (deleted); only active notes can be changed."
    )
