"""Issue 19 item 3, the edges of the HTTP face's kept answers (api/answers.py,
store/freshness.py), each found by an adversarial review: a data_version is only compared
with one from the same watch; dropped answers leave memory at once (no cycle for the
collector); another process's release is seen by a request answered from memory; an
answer older than its age limit goes even if never asked for again; a person's new mark
drops every answer kept for them; an answer that says memory could not be read is not kept;
the answers kept are bounded in bytes."""

from __future__ import annotations

import gc
import time
import weakref
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from engram.api import answers, models
from engram.api.routes import MemoryApi
from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.clock import ManualClock
from engram.model.ids import PersonId
from engram.model.scope import Durability, Kind, Scope
from engram.runtime import api_keys
from engram.runtime.agents import set_agent
from engram.store import freshness
from engram.store.dialect import sqlite_path
from engram.store.release import ReleaseRequests
from engram.store.store import Store

ANA = PersonId("ana")
MARK: freshness.Mark = (("x", 1, b"h"),)
LATER: freshness.Mark = (("x", 2, b"i"),)


class _Held:
    """A kept value that can be watched for leaving memory (bytes cannot be)."""

    def __init__(self, token: object) -> None:
        self.token = token


@pytest.fixture
def served(store: Store) -> tuple[MemoryApi, str]:
    set_agent(store, "helper", {"memory": {"tools": {"remember": True}}}, "ops")
    _, key = api_keys.create_key(store, "backend", "ops")
    session = PersonSession(store, ANA, ANA)
    add_note(session, "Plays the cello.", Kind.FACT, Scope.DIRECT, create_person=True)
    return MemoryApi(store), f"Bearer {key}"


def test_issue19_item3_versions_of_two_watches_never_compare_equal(store: Store) -> None:
    first = freshness.version_now(store)
    store.plaintext_caches.pop("data_version")  # a new watch, as after a lock
    second = freshness.version_now(store)
    assert first is not None and second is not None
    assert first != second  # each connection counts from its own start


def test_issue19_item3_dropped_answers_leave_memory_without_the_collector(store: Store) -> None:
    since = answers.generation(store)
    value = _Held(since)  # as a kept call holds its generation
    answers.keep(store, ("call", b"k", ANA, "helper"), MARK, value, since)
    watched = weakref.ref(value)
    del value
    gc.disable()
    try:
        store.plaintext_caches.clear()  # an erasure committed
        assert watched() is None
    finally:
        gc.enable()


def test_issue19_item3_a_release_is_seen_by_a_request_answered_from_memory(
    served: tuple[MemoryApi, str], store: Store
) -> None:
    api, authorization = served
    call = api.bind(authorization, ["ana"], "helper")
    assert api.bind_kept(authorization, ["ana"], "helper") is call
    path = sqlite_path(store.url)
    assert path is not None
    ReleaseRequests(path).post()  # another process erases and asks everyone to let go
    assert api.bind_kept(authorization, ["ana"], "helper") is None
    assert answers.CACHE not in store.plaintext_caches


def test_issue19_item3_an_old_answer_goes_even_if_never_asked_again(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    since = answers.generation(store)
    answers.keep(store, ("answer", b"k", ANA, "helper", "q1"), MARK, b"{}", since)
    monkeypatch.setattr(answers, "MAX_AGE_S", 0.0)
    monkeypatch.setattr(answers, "SWEEP_EVERY_S", 0.0)
    time.sleep(0.01)
    assert answers.peek(store, ("answer", b"k", PersonId("bo"), "helper", "q2")) is None
    held: Any = store.plaintext_caches[answers.CACHE]
    assert not held.answers and held.size == 0


def test_issue19_item3_a_new_mark_drops_every_answer_kept_for_that_person(store: Store) -> None:
    since = answers.generation(store)
    for question in ("page 1", "page 2"):
        answers.keep(store, ("answer", b"k", ANA, "helper", question), MARK, b"{}", since)
    bo = ("answer", b"k", PersonId("bo"), "helper", "page 1")
    answers.keep(store, bo, MARK, b"{}", since)
    assert answers.kept(store, ("answer", b"k", ANA, "helper", "page 1"), LATER) is None
    assert answers.peek(store, ("answer", b"k", ANA, "helper", "page 2")) is None
    assert answers.peek(store, bo) is not None  # another person's stays


def test_issue19_item3_an_answer_that_could_not_read_memory_is_not_kept(
    served: tuple[MemoryApi, str],
) -> None:
    api, authorization = served
    call = api.bind(authorization, ["ana"], "helper")
    failed = {"items": [], "error": "memory could not be read just now"}
    body = api.answer_json(call, "q", models.SearchAnswer, lambda: failed)
    assert b"could not be read" in body
    assert api.kept_json(call, "q") is None  # asked again, it is read again
    api.answer_json(call, "q2", models.SearchAnswer, lambda: {"items": []})
    assert api.kept_json(call, "q2") is not None


def test_issue19_item3_kept_answers_are_bounded_in_bytes(
    store: Store, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(answers, "MAX_BYTES", 8_000)
    since = answers.generation(store)
    for n in range(10):
        answers.keep(store, ("answer", b"k", ANA, "helper", n), MARK, b"x" * 900, since)
    held: Any = store.plaintext_caches[answers.CACHE]
    assert held.size <= 8_000 and len(held.answers) == 8
    assert answers.peek(store, ("answer", b"k", ANA, "helper", 9)) is not None
    assert answers.peek(store, ("answer", b"k", ANA, "helper", 0)) is None  # the oldest
    answers.keep(store, ("answer", b"k", ANA, "helper", "big"), MARK, b"x" * 2_000, since)
    assert answers.peek(store, ("answer", b"k", ANA, "helper", "big")) is None  # too big


def test_issue19_item3_M3_a_kept_search_answer_goes_when_its_transient_note_is_over(
    served: tuple[MemoryApi, str], store: Store, clock: ManualClock
) -> None:
    """A search answer kept while nothing is written would otherwise serve a transient
    note past its four hours (M3): the answer holds until the pool's first expiry only."""
    api, authorization = served
    session = PersonSession(store, ANA, ANA)
    add_note(
        session, "At the cello lesson.", Kind.FACT, Scope.DIRECT, durability=Durability.TRANSIENT
    )
    question = models.SearchRequest(query="cello", limit=5)

    def found() -> list[str]:
        call = api.bind(authorization, ["ana"], "helper")
        answer = models.SearchAnswer.model_validate_json(api.search_json(call, question))
        return sorted(item.text for item in answer.items)

    assert found() == ["At the cello lesson.", "Plays the cello."]
    clock.advance(timedelta(hours=3, minutes=58))
    assert found() == ["At the cello lesson.", "Plays the cello."]  # kept, nothing written
    clock.advance(timedelta(minutes=2))
    assert found() == ["Plays the cello."]
