"""Issue 19 item 3: `engram learn` tries again with backoff instead of failing while other
programs (an HTTP server taking turns, its usage writer) keep writing to the store."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.engine.extraction import ExtractionRequest, Proposal
from engram.engine.rule_extractor import RuleExtractor
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.agents import set_agent
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.extraction import learn_person
from engram.store import dialect
from engram.store.store import Store

ANA = PersonId("ana")


def _exchange(cli: Any, tmp_path: Path) -> None:
    assert cli("init").code == 0
    config = tmp_path / "agent.json"
    config.write_text(json.dumps({"memory": {"learning": {"mode": "automatic"}}}))
    assert cli("agents", "set", "helper", "--config", str(config)).code == 0
    started = cli("conversation", "start", "--participants", "ana", "--agent", "helper")
    conversation = started.out.strip()
    for role, author, text in (("user", "ana", "I moved to Oslo."), ("assistant", "helper", "Ok")):
        args = ["--role", role, "--author", author, "--text", text]
        assert cli("conversation", "append", conversation, *args).code == 0


def test_issue19_item3_learn_waits_out_a_writer_that_outlasts_the_busy_timeout(
    cli: Any, tmp_path: Path, store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program holds the write lock for five busy timeouts: learn used to stop
    with "the store is busy" (exit 1); it now tries again and learns."""
    _exchange(cli, tmp_path)
    monkeypatch.setattr(dialect, "BUSY_TIMEOUT_MS", 200)
    other = sqlite3.connect(store_path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    threading.Timer(1.0, lambda: other.execute("ROLLBACK")).start()
    try:
        learned = cli("learn", "--json")
    finally:
        other.close()
    assert learned.code == 0, learned.err
    (done,) = learned.json()["passes"]
    assert done.get("error") is None and len(done["applied"]) == 1
    notes = cli("notes", "list", "--person", "ana", "--json").json()
    assert [n["text"] for n in notes] == ["Lives in Oslo."]


class BusyNeighbour:
    """The rule extractor, while someone else keeps writing Ana's notes: each of the first
    `writes` passes sees a note arrive while it runs (as HTTP writes do)."""

    name = "rules"

    def __init__(self, store: Store, writes: int) -> None:
        self.store, self.writes, self.calls = store, writes, 0

    def extract(self, request: ExtractionRequest) -> list[Proposal]:
        self.calls += 1
        if self.calls <= self.writes:
            session = PersonSession(self.store, ANA, "api:key")
            add_note(session, f"Note number {self.calls}.", Kind.FACT, Scope.DIRECT)
        return RuleExtractor().extract(request)


def test_issue19_item3_learn_looks_again_while_other_writers_keep_changing_the_notes(
    store: Store,
) -> None:
    """W5 makes a pass look again when the notes it was shown changed before its write; with
    an HTTP server writing meanwhile that happened on each of the first attempts, and learn
    gave up after three. It now backs off and looks again (up to eight times)."""
    set_agent(store, "helper", {"memory": {"learning": {"mode": "automatic"}}}, "ops")
    info = start_conversation(store, [ANA], agent="helper")
    append_turn(store, info.id, role="user", author=ANA, text="I moved to Oslo.")
    append_turn(store, info.id, role="assistant", author="helper", text="Ok")
    neighbour = BusyNeighbour(store, writes=4)
    (report,) = learn_person(store, ANA, neighbour)
    assert report.error is None and neighbour.calls == 5
    assert len(report.applied) == 1
