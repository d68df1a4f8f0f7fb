"""Issue 19 item 3: usage is recorded after the answer, batched, by a background writer.

A read that hands notes out owes the usage ledger an `item_used` event. Written inside the
request, it made every read wait for the write lock: while another process held it, the
turn's block came back without memory after the busy timeout, and memory_recall said the
memory was unreadable. Now the read answers at once; the writer waits the store out (never
dropping a record), and what is pending when the server stops is written before it exits.
A writer that cannot keep a record (its queue is full) makes the read hand out nothing (A9).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from engram.api.app import build_app
from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.event_bodies import ItemUsed, NoteAdded, body_as
from engram.model.events import Cause, EventType, NewEvent
from engram.model.ids import ConversationId, NoteId, PersonId
from engram.model.scope import Kind, Scope
from engram.runtime import api_keys
from engram.runtime.agents import set_agent
from engram.runtime.context import Attribution, assemble_turn
from engram.runtime.conversations import start_conversation
from engram.runtime.usage_writer import UsageWriter
from engram.store import dialect, journal
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.integration.test_http_api import Client, running

ANA = PersonId("ana")
BASE = "/v1/memory/agents/helper/memory"
NOTE = "Plays the cello."
CONFIG = {"memory": {"tools": {"remember": True, "search": True}, "learning": {"mode": "off"}}}


def _setup(store: Store) -> ConversationId:
    """Ana with a private note and a conversation of hers alone; the store is closed."""
    set_agent(store, "helper", CONFIG, "ops")
    conversation = start_conversation(store, [ANA], agent="helper").id
    add_note(PersonSession(store, ANA, ANA), NOTE, Kind.FACT, Scope.DIRECT)
    return conversation


@contextmanager
def _write_lock(store_path: Path) -> Iterator[Callable[[], None]]:
    """Another process's write transaction on the store; yields a function that ends it."""
    other = sqlite3.connect(store_path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    held = [True]

    def release() -> None:
        if held[0]:
            held[0] = False
            other.execute("ROLLBACK")

    try:
        yield release
    finally:
        release()
        other.close()


def _usage(store_path: Path) -> list[tuple[str, list[str]]]:
    """(via, notes) of every usage record in Ana's journal, read by another connection."""
    reopened = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        with reopened.read() as conn:
            events = list(journal.events(conn, ANA))
    finally:
        reopened.close()
    return [
        (body_as(e.body, ItemUsed).via_name, list(body_as(e.body, ItemUsed).notes))
        for e in events
        if e.type is EventType.ITEM_USED
    ]


def test_issue19_item3_http_reads_answer_with_memory_while_another_writer_holds_the_store(
    store: Store, store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The block and recall come back at once, with the note, while another process holds
    the write lock (the old code waited the busy timeout, then answered without memory);
    their usage is written once the lock goes, and shown by the usage route."""
    conversation = _setup(store)
    _, key = api_keys.create_key(store, "backend", "ops")
    store.close()
    monkeypatch.setattr(dialect, "BUSY_TIMEOUT_MS", 3_000)
    served = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        with running(build_app(served)) as base:
            api = Client(base, key)
            turn = {"conversation": conversation}
            with _write_lock(store_path):
                started = time.monotonic()
                status, block = api("POST", f"{BASE}/assemble", turn)
                assert status == 200 and NOTE in block["block"]
                status, recalled = api("POST", f"{BASE}/recall", turn)
                assert status == 200 and recalled["status"] == "ok"
                assert [n["text"] for n in recalled["notes"]] == [NOTE]
                assert time.monotonic() - started < 2.0  # neither waited the 3 s timeout
            (note,) = [n["id"] for n in block["notes"]]
            status, usage = api("GET", f"{BASE}/items/{note}/usage")
            assert status == 200
            assert [u["via"] for u in usage["usage"]] == ["assembly", "recall"]
            api.http.close()
    finally:
        served.close()


def test_issue19_item3_usage_pending_at_shutdown_is_written_before_the_server_exits(
    store: Store, store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server stops while its usage record is still waiting for a busy store: the
    stop waits the store out and writes it (kill -9 would lose this batch, docs say so)."""
    conversation = _setup(store)
    _, key = api_keys.create_key(store, "backend", "ops")
    store.close()
    monkeypatch.setattr(dialect, "BUSY_TIMEOUT_MS", 200)
    served = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        with _write_lock(store_path) as release:
            with running(build_app(served)) as base:
                api = Client(base, key)
                status, _ = api("POST", f"{BASE}/recall", {"conversation": conversation})
                assert status == 200
                api.http.close()
                # The lock goes only while the server is stopping.
                threading.Timer(0.8, release).start()
                stopping = time.monotonic()
            assert time.monotonic() - stopping >= 0.7  # the stop waited the store out
    finally:
        served.close()
    assert [via for via, _ in _usage(store_path)] == ["recall"]


def test_issue19_item3_the_writer_waits_out_a_busy_store_and_batches_per_person(
    store: Store, store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records queued while the store is held (past several busy timeouts) are all
    written once it is free, in one transaction: they share one moment."""
    conversation = _setup(store)
    note = store_notes(store)[0]
    monkeypatch.setattr(dialect, "BUSY_TIMEOUT_MS", 100)
    writer = UsageWriter(store)
    try:
        with _write_lock(store_path) as release:
            for via in ("assembly", "recall", "search"):
                body = ItemUsed((NoteId(note),), via)
                event = NewEvent(EventType.ITEM_USED, "runtime", body, Cause(conversation))
                assert writer.record(ANA, event)
            time.sleep(0.5)  # several busy timeouts: the writer backs off, never drops
            assert writer.refused == 0 and writer.written == 0
            release()
            assert writer.flush(10)
        assert writer.written == 3 and writer.refused == 0
    finally:
        writer.close()
    with store.read() as conn:
        used = [e for e in journal.events(conn, ANA) if e.type is EventType.ITEM_USED]
    assert [body_as(e.body, ItemUsed).via for e in used] == ["assembly", "recall", "search"]
    assert len({e.at for e in used[1:]}) == 1  # the two queued meanwhile: one batch


def test_issue19_item3_A9_a_record_that_cannot_be_kept_hands_out_no_notes(
    store: Store, store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer whose queue is full (the store refused writes for a long while) takes no
    more records, and a turn then gets its block without memory, never an unaudited note."""
    conversation = _setup(store)
    monkeypatch.setattr(dialect, "BUSY_TIMEOUT_MS", 100)
    writer = UsageWriter(store, max_pending=1)
    where = Attribution(ANA, conversation)
    try:
        with _write_lock(store_path):
            blocks = [assemble_turn(store, where, record_usage=True, usage=writer)]
            deadline = time.monotonic() + 10  # the writer has taken it and waits the lock out
            while writer._queue.qsize() and time.monotonic() < deadline:
                time.sleep(0.01)
            blocks += [assemble_turn(store, where, record_usage=True, usage=writer) for _ in "bc"]
            assert NOTE in blocks[0].block  # taken: written later
            assert NOTE not in blocks[-1].block  # the queue was full: no note handed out
            assert assemble_turn(store, where).block.count(NOTE) == 1  # a preview shows it
    finally:
        writer.close()


def test_issue19_item3_mcp_recall_answers_while_another_writer_holds_the_store(
    store: Store, store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """memory_recall and the block resource over MCP (the SDK's own client): the note, at
    once, not "busy" nor "unreadable"; the usage follows once the lock is gone."""
    from mcp import Client

    from engram.mcp.server import bind, build_server

    conversation = _setup(store)
    store.close()
    monkeypatch.setattr(dialect, "BUSY_TIMEOUT_MS", 3_000)
    opened = Store.open(str(store_path), passphrase=PASSPHRASE)
    writer = UsageWriter(opened)
    answers: dict[str, Any] = {}

    async def scenario() -> None:
        bound = bind(opened, "ana", conversation, "helper", None, usage=writer)
        server = build_server(bound, watch_idle=False)
        async with Client(server, read_timeout_seconds=30) as client:
            with _write_lock(store_path):
                started = time.monotonic()
                answers["recall"] = await client.call_tool("memory_recall", {})
                answers["search"] = await client.call_tool("memory_search", {"query": "cello"})
                answers["seconds"] = time.monotonic() - started

    try:
        anyio.run(scenario)
        assert writer.flush(10)
    finally:
        writer.close()
        opened.close()
    for name in ("recall", "search"):
        assert not answers[name].is_error, answers[name].content
        assert NOTE in str(answers[name].structured_content)
    assert answers["seconds"] < 2.0
    assert [via for via, _ in _usage(store_path)] == ["recall", "search"]


def store_notes(store: Store) -> list[str]:
    """Ana's note ids, oldest first."""
    with store.read() as conn:
        events = list(journal.events(conn, ANA))
    return [body_as(e.body, NoteAdded).note for e in events if e.type is EventType.NOTE_ADDED]


def test_issue19_item3_a_served_store_answers_reads_while_another_process_holds_its_lock(
    tmp_path: Path,
) -> None:
    """`engram serve` in its own process; another process takes the store's write lock
    for 4 s (the server's busy timeout is 15 s). The block and recall come back at once
    with the note (they used to wait the lock out), and the reads' usage is there once
    the lock has gone."""
    import subprocess
    import sys

    import httpx

    from tests.serve_process import served_store

    with served_store(tmp_path, {"helper": CONFIG}) as served:
        headers = {"Authorization": f"Bearer {served.key}", "X-Engram-External-User-Id": "ana"}
        with httpx.Client(base_url=served.url, headers=headers, timeout=30) as http:
            made = http.post(f"{BASE}/items", json={"text": NOTE, "kind": "fact"})
            assert made.status_code == 201, made.text
            note = made.json()["id"]
            conversation = http.post(f"{BASE}/conversations", json={}).json()["id"]
            ready = tmp_path / "held"
            holder = subprocess.Popen(
                [sys.executable, "-m", "tests.store_worker", "hold-write"]
                + [str(tmp_path / "served.engram"), str(ready), "4"],
                stdout=subprocess.PIPE,
                text=True,
            )
            try:
                deadline = time.monotonic() + 20
                while not ready.exists() and time.monotonic() < deadline:
                    time.sleep(0.02)
                assert ready.exists()
                started = time.monotonic()
                block = http.post(f"{BASE}/assemble", json={"conversation": conversation})
                recalled = http.post(f"{BASE}/recall", json={"conversation": conversation})
                took = time.monotonic() - started
                assert holder.poll() is None  # the lock was held all along
                assert block.status_code == 200 and NOTE in block.json()["block"]
                assert recalled.status_code == 200, recalled.text
                assert [n["text"] for n in recalled.json()["notes"]] == [NOTE]
                assert took < 2.0, took
            finally:
                assert holder.wait(timeout=30) == 0
            usage = http.get(f"{BASE}/items/{note}/usage")
            assert usage.status_code == 200
            deadline = time.monotonic() + 20
            while len(usage.json()["usage"]) < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
                usage = http.get(f"{BASE}/items/{note}/usage")
            assert [u["via"] for u in usage.json()["usage"]] == ["assembly", "recall"]
