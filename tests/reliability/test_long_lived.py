"""Issue 15 item 1 (reliability suite): a long-lived process — a `Store` held open, as
`engram serve`, `engram mcp` and the inspector hold it — through an erase, an excision, a
conversation delete and an open that finishes a pending erasure, with other processes
opening, closing and writing meanwhile.

POSIX locks belong to a process and closing any descriptor of the file drops them all: an
erasure that read the store's files itself left the holder without its locks, the next
process to close its last connection checkpointed and deleted the WAL the holder was still
writing through, and acknowledged writes vanished (2 of 5 through `serve`). Counted here:
acknowledged writes lost, crashed processes, and locks the holder lost (must all be 0).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from engram.control.notes import add_note
from engram.control.persons import ensure_person
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import append_turn, record_tool_call, start_conversation
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.integration.test_erasure_while_open import Reader
from tests.reliability.conftest import FULL, size
from tests.store_worker import run_cli

ROOT = Path(__file__).resolve().parents[2]
HOST, VICTIM, OTHER = PersonId("host"), PersonId("victim"), PersonId("other")
TRIALS = size(1, 10)
OPERATIONS = ("erase", "excise", "delete", "pending-open")


class Holder:
    """The long-lived process (long_lived_worker), spoken to line by line."""

    def __init__(self, path: Path) -> None:
        env = {**os.environ, "ENGRAM_TEST_PASSPHRASE": PASSPHRASE}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.long_lived_worker", str(path)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.ask_line() == "ready", self.process.communicate()

    def ask_line(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def ask(self, command: str) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return self.ask_line()

    def close(self) -> int:
        self.ask("quit")
        self.process.communicate(timeout=60)
        return self.process.returncode


def _prepared(path: Path) -> dict[str, str]:
    store = Store.create(str(path), passphrase=PASSPHRASE, use_keyring=False)
    try:
        for person in (HOST, VICTIM, OTHER):
            ensure_person(store, person)
        add_note(PersonSession.open(store, HOST), "Host note 0", Kind.FACT, Scope.PORTABLE)
        own = start_conversation(store, [VICTIM])
        shared = start_conversation(store, [VICTIM, OTHER])
        for conversation in (own, shared):
            append_turn(store, conversation.id, role="user", author=VICTIM, text="victim words")
        append_turn(store, shared.id, role="user", author=OTHER, text="other words")
        call = record_tool_call(store, shared.id, name="lookup", arguments="{}", result="secret")
        add_note(PersonSession.open(store, VICTIM), "Victim note", Kind.FACT, Scope.PORTABLE)
    finally:
        store.close()
    return {"own": own.id, "shared": shared.id, "call": call}


def _leave_pending_erasure(path: Path, tmp_path: Path) -> None:
    """An erase that could not finish (a program that is not Engram held a reader)."""
    reader = Reader("hold-sqlite", path, tmp_path, seconds=60)
    try:
        erased = run_cli(path, "person", "erase", VICTIM, "--confirm", VICTIM, "--wait", "0.2")
        assert erased.returncode != 0, erased.stdout
    finally:
        reader.stop()


def _trial(tmp_path: Path, operation: str, trial: int, counts: Counter[str]) -> list[str]:
    path = tmp_path / f"{operation}-{trial}.engram"
    ids = _prepared(path)
    if operation == "pending-open":
        _leave_pending_erasure(path, tmp_path)
    acknowledged: list[str] = []
    problems: list[str] = []
    holder = Holder(path)  # for pending-open, this open finishes the erasure
    first = holder.ask("note held before")
    assert first.startswith("ok "), first
    acknowledged.append(first.split()[1])
    before = int(holder.ask("locks").split()[1])
    command = {
        "erase": f"erase {VICTIM}",
        "excise": f"excise {ids['shared']} {ids['call']}",
        "delete": f"delete {ids['own']} {VICTIM}",
        "pending-open": "locks",
    }[operation]
    done = holder.ask(command)
    if not done.startswith("ok"):
        problems.append(f"{operation}: {done}")
    after = int(holder.ask("locks").split()[1])
    if after < before:
        counts["locks the holder lost"] += before - after
        problems.append(f"{operation}: the holder held {before} locks, then {after}")
    # Another process opens and closes the store: with the holder's locks gone it would
    # think itself alone, checkpoint and delete the WAL the holder writes through.
    listed = run_cli(path, "persons")
    if listed.returncode != 0:
        problems.append(f"{operation}: persons: {listed.stderr.strip()}")
    for n in range(3):
        answer = holder.ask(f"note held after {n}")
        if answer.startswith("ok "):
            acknowledged.append(answer.split()[1])
        added = run_cli(
            path,
            "notes",
            "add",
            "--person",
            HOST,
            "--text",
            f"cli note {n}",
            "--kind",
            "fact",
            "--scope",
            "portable",
        )
        if added.returncode == 0:
            acknowledged.append(added.stdout.strip().split()[-1])
    code = holder.close()
    if code != 0:
        counts["crashed processes"] += 1
        problems.append(f"{operation}: the holder exited {code}")
    counts["acknowledged writes"] += len(acknowledged)
    shown = run_cli(path, "notes", "list", "--person", HOST, "--all", "--json")
    kept = {note["id"] for note in json.loads(shown.stdout)} if shown.returncode == 0 else set()
    lost = [note for note in acknowledged if note not in kept]
    counts["acknowledged writes lost"] += len(lost)
    if lost:
        problems.append(f"{operation}: {len(lost)} of {len(acknowledged)} acknowledged lost")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("operation", OPERATIONS)
def test_issue15_item1_a_long_lived_process_loses_no_acknowledged_write(
    tmp_path: Path, operation: str
) -> None:
    counts: Counter[str] = Counter()
    problems: list[str] = []
    started = time.monotonic()
    for trial in range(TRIALS):
        problems += _trial(tmp_path, operation, trial, counts)
    print(
        f"\nlong-lived {operation} ({'full' if FULL else 'reduced'}, {TRIALS} trials, "
        f"{time.monotonic() - started:.1f} s): {json.dumps(counts)}"
    )
    assert counts["acknowledged writes"] >= 7 * TRIALS
    assert not problems, "\n".join(problems)


ERASE_ROUNDS = size(3, 20)


def _victims(path: Path, count: int) -> list[PersonId]:
    store = Store.create(str(path), passphrase=PASSPHRASE, use_keyring=False)
    people = [PersonId(f"v{n}") for n in range(count)]
    try:
        ensure_person(store, HOST)
        shared = start_conversation(store, [HOST, *people])
        for person in people:
            add_note(PersonSession.open(store, person), f"{person}'s note", Kind.FACT, Scope.DIRECT)
            own = start_conversation(store, [person])
            append_turn(store, own.id, role="user", author=person, text=f"{person} alone")
            append_turn(store, shared.id, role="user", author=person, text=f"{person} shared")
    finally:
        store.close()
    return people


@pytest.mark.slow
def test_issue15_item4_two_processes_erasing_at_once_both_report_what_happened(
    tmp_path: Path,
) -> None:
    path = tmp_path / "both.engram"
    people = _victims(path, 2 * ERASE_ROUNDS)
    holders = [Holder(path), Holder(path)]
    counts: Counter[str] = Counter()
    problems: list[str] = []
    for round_ in range(ERASE_ROUNDS):
        pair = people[2 * round_ : 2 * round_ + 2]
        for holder, person in zip(holders, pair, strict=True):
            assert holder.process.stdin is not None
            holder.process.stdin.write(f"erase {person}\n")
            holder.process.stdin.flush()
        for holder, person in zip(holders, pair, strict=True):
            answer = holder.ask_line()
            counts["erase calls"] += 1
            if answer != "ok erased":
                counts["erase calls that failed"] += 1
                problems.append(f"erase {person}: {answer}")
    for holder in holders:
        code = holder.close()
        if code != 0:
            counts["crashed processes"] += 1
            problems.append(f"a holder exited {code}")
    listed = run_cli(path, "persons", "--json")
    left = {p["id"] if isinstance(p, dict) else p for p in json.loads(listed.stdout)}
    counts["people not erased"] = len(left & set(people))
    print(f"\nconcurrent erasures ({'full' if FULL else 'reduced'}): {json.dumps(counts)}")
    checked = run_cli(path, "verify")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert counts["people not erased"] == 0
    assert not problems, "\n".join(problems)
