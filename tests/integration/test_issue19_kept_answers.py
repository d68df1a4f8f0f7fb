"""Issue 19 item 3: the HTTP face gives a page of items, a search and who a key is from
memory while nothing they were read from has changed — and never a stale one. Each change
below is made by another process (the CLI, on the served store's file) while the server
runs, and the very next request sees it: an edit, a new note a search finds, a deletion,
an erased person, a revoked key. Plus the freshness marks themselves (store.freshness)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from engram.api import answers
from engram.control import notes
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime import api_keys
from engram.store import freshness
from engram.store.store import Store
from tests.serve_process import Served, cli_json, served_store

ITEMS = "/v1/memory/agents/helper/memory/items"
SEARCH = "/v1/memory/agents/helper/memory/search"
ANA = PersonId("ana")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Served, Path]]:
    agents = {"helper": {"memory": {"tools": {"remember": True}}}}
    with served_store(tmp_path, agents) as running:
        yield running, tmp_path / "served.engram"


def _cli(store: Path, folder: Path, *args: str) -> Any:
    """The CLI, as another process would run it on the served store's file."""
    return cli_json(store, folder, *args)


def _texts(http: httpx.Client) -> list[str]:
    answer = http.get(ITEMS, params={"limit": 20})
    assert answer.status_code == 200, answer.text
    return [item["text"] for item in answer.json()["items"]]


def _found(http: httpx.Client, query: str) -> list[str]:
    answer = http.post(SEARCH, json={"query": query})
    assert answer.status_code == 200, answer.text
    return sorted(item["text"] for item in answer.json()["items"])


def test_issue19_item3_a_kept_answer_is_never_stale(served: tuple[Served, Path]) -> None:
    running, store = served
    folder = store.parent
    headers = {"Authorization": f"Bearer {running.key}", "X-Engram-External-User-Id": "ana"}
    with httpx.Client(base_url=running.url, headers=headers, timeout=30) as http:
        made = http.post(ITEMS, json={"text": "Plays the cello.", "kind": "fact"})
        assert made.status_code == 201, made.text
        cello = made.json()["id"]
        assert _texts(http) == _texts(http) == ["Plays the cello."]  # the second: kept
        assert _found(http, "viola") == _found(http, "viola") == []

        edited = _cli(
            store, folder, "notes", "edit", cello, "--person", "ana", "--text", "Plays the viola."
        )
        assert _texts(http) == ["Plays the viola."]
        assert _found(http, "viola") == ["Plays the viola."]

        _cli(
            store,
            folder,
            "notes",
            "add",
            "--person",
            "ana",
            "--text",
            "Tunes the viola.",
            "--kind",
            "fact",
            "--scope",
            "direct",
        )
        assert _found(http, "viola") == ["Plays the viola.", "Tunes the viola."]

        _cli(store, folder, "notes", "delete", edited["id"], "--person", "ana")
        assert _texts(http) == ["Tunes the viola."]
        assert _found(http, "viola") == ["Tunes the viola."]

        _cli(store, folder, "person", "erase", "ana", "--confirm", "ana")
        gone = http.get(ITEMS, params={"limit": 20})
        assert gone.status_code == 404, gone.text

        again = http.post(ITEMS, json={"text": "Plays the drums.", "kind": "fact"})
        assert again.status_code == 201, again.text
        assert _texts(http) == ["Plays the drums."]  # a new ana: nothing of the old one

        (key,) = _cli(store, folder, "keys", "list")
        _cli(store, folder, "keys", "revoke", key["id"])
        refused = http.get(ITEMS, params={"limit": 20})
        assert refused.status_code == 401, refused.text
        assert http.post(SEARCH, json={"query": "drums"}).status_code == 401


def test_issue19_item3_freshness_marks_move_with_every_write(store: Store) -> None:
    session = PersonSession(store, ANA, ANA)
    first = notes.add_note(session, "Plays the cello.", Kind.FACT, Scope.DIRECT, create_person=True)
    version, mark = freshness.version_now(store), freshness.mark_now(store, ANA)
    assert version is not None  # a SQLite store in a file has the cheap question
    assert freshness.version_now(store) == version  # nothing committed: it stands
    assert freshness.mark_now(store, ANA) == mark

    notes.edit_note(session, first, scope=Scope.PORTABLE)  # the person's journal
    assert freshness.version_now(store) != version
    assert freshness.mark_now(store, ANA) != mark
    mark = freshness.mark_now(store, ANA)

    api_keys.create_key(store, "backend", "ops")  # the ledger
    assert freshness.mark_now(store, ANA) != mark
    assert freshness.mark_now(store, PersonId("bo")) != ()  # the ledger alone, for anyone


def test_issue19_item3_no_cheap_question_without_a_file(tmp_path: Path, store: Store) -> None:
    """A store that is not a SQLite file (here: the watch cannot open) falls back to marks."""
    store.plaintext_caches["data_version"] = False
    assert freshness.version_now(store) is None
    assert os.path.exists(str(store.engine.url.database))


def test_issue19_item3_an_answer_read_across_an_erasure_is_not_kept(store: Store) -> None:
    """The kept answers hold note texts in clear: an erasure (or a lock) drops them all,
    and an answer whose reading began before that is not kept afterwards, even under a mark
    that could never match again."""
    mark = freshness.mark_now(store, ANA)
    since = answers.generation(store)
    answers.keep(store, "page", mark, b'{"items": ["Plays the cello."]}', since)
    assert answers.kept(store, "page", mark) is not None
    reading = answers.generation(store)  # a request starts reading...
    store.plaintext_caches.clear()  # ...an erasure commits meanwhile...
    answers.keep(store, "late", mark, b'{"items": ["Plays the cello."]}', reading)
    assert answers.peek(store, "late") is None  # ...and what it read is not kept
    assert answers.kept(store, "page", mark) is None
