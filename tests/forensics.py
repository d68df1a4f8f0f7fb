"""Forensic helpers: a person whose every kind of data carries a canary, the ciphertexts
captured before an erase, and scans of a store's raw files for any of them."""

from __future__ import annotations

import secrets
import sqlite3
from pathlib import Path

import pytest

from engram.control.conversations import delete_conversation
from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import (
    append_turn,
    excise_tool_result,
    record_tool_call,
    start_conversation,
)
from engram.runtime.note_writes import NoteDraft, add_digest_line, learn_note
from engram.store import pseudonyms
from engram.store.store import Store

WINDOW = 24  # bytes of a ciphertext looked for at once (random bytes never collide by chance)
STRIDE = 8  # every window of each ciphertext: a fragment of 31 bytes anywhere is found
SIDE_SUFFIXES = ("", "-wal", "-shm", "-journal")


def fill(store: Store, person: PersonId, other: PersonId) -> tuple[str, list[bytes]]:
    """Notes, digest lines, own and shared conversations for `person`, each with a canary;
    returns the canary and every ciphertext and wrapped key the erase must remove."""
    canary = "CANARY-" + secrets.token_hex(8)
    own = start_conversation(store, [person])
    shared = start_conversation(store, [person, other])
    turn = append_turn(store, own.id, role="user", author=person, text=f"I am {canary}")
    append_turn(store, shared.id, role="user", author=person, text=f"shared {canary}")
    append_turn(store, shared.id, role="user", author=other, text="the other person's words")
    learn_note(store, person, NoteDraft(f"Name is {canary}", Kind.FACT, Scope.DIRECT), own.id, turn)
    learn_note(
        store, person, NoteDraft(f"Said {canary} here", Kind.FACT, Scope.PORTABLE), shared.id, None
    )
    add_digest_line(store, person, own.id, f"Talked about {canary}")
    add_note(
        PersonSession.open(store, person), f"Own note {canary}", Kind.PREFERENCE, Scope.UNSPECIFIED
    )
    return canary, capture(store_file(store), person, own.id, shared.id)


def store_file(store: Store) -> Path:
    """The database file behind a SQLite store."""
    return Path(store.url.removeprefix("sqlite:///"))


def capture(path: Path, person: str, own: str, shared: str) -> list[bytes]:
    """What an attacker copies before the erase: every ciphertext and wrapped key of it."""
    with sqlite3.connect(path) as raw:
        captured = [
            bytes(r[0])
            for r in raw.execute("select sealed from journal_payloads where person=?", (person,))
        ]
        captured += [
            bytes(r[0])
            for r in raw.execute(
                "select sealed from log_payloads where conversation=? or "
                "(conversation=? and seq in "
                "(select seq from conversation_log where conversation=? and author=?))",
                (own, shared, shared, person),
            )
        ]
        captured += [
            bytes(r[0])
            for r in raw.execute(
                "select wrapped from data_keys where key_ref=? or key_ref=?",
                (f"person:{person}", f"conversation:{own}"),
            )
        ]
    raw.close()
    assert len(captured) >= 7
    return captured


def raw_files(path: Path) -> list[Path]:
    """The database, its WAL and shared memory, and every side file beside it."""
    return sorted(p for p in path.parent.iterdir() if p.name.startswith(path.name))


def raw_bytes(path: Path) -> bytes:
    """All of those files' bytes."""
    return b"".join(p.read_bytes() for p in raw_files(path) if p.is_file())


def traces(path: Path, captured: list[bytes], canary: str | None = None) -> list[str]:
    """What of the erased material is still in the files (empty when the erase held)."""
    blob = raw_bytes(path)
    hits = [f"plaintext {canary}"] if canary and canary.encode() in blob else []
    hits += [f"ciphertext {c[:8].hex()}" for c in captured if fragment_in(c, blob)]
    return hits


def windows(ciphertext: bytes) -> list[bytes]:
    """Every WINDOW bytes of a ciphertext, STRIDE apart, and its tail."""
    found = [ciphertext[i : i + WINDOW] for i in range(0, len(ciphertext) - WINDOW + 1, STRIDE)]
    return [*found, ciphertext[-WINDOW:]]


def fragment_in(ciphertext: bytes, blob: bytes) -> bool:
    """Whether any window of `ciphertext` is in `blob` (issue 15 item 2: not only its tail)."""
    return any(window in blob for window in windows(ciphertext))


# A person erased from a store the previous release made, and someone they shared it with.
ERASED = PersonId("zq7-erased-person")
OTHER = PersonId("other")


def previous_release_store(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the release before pseudonyms wrote: every chained header committed to clear
    ids, so the erase can only count the rows that keep the erased person's id."""
    with monkeypatch.context() as old_code:
        old_code.setattr(pseudonyms, "pseudonym", lambda store, name: name)
        fill(store, ERASED, OTHER)
        doomed = start_conversation(store, [ERASED, OTHER])
        append_turn(store, doomed.id, role="user", author=OTHER, text="soon gone")
        delete_conversation(PersonSession.open(store, ERASED), doomed.id)
        tools = start_conversation(store, [ERASED, OTHER])
        call = record_tool_call(store, tools.id, name="lookup", arguments="{}", result="42")
        excise_tool_result(store, tools.id, call, actor=ERASED, reason="wrong answer")
