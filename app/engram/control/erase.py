"""Erasing a person (C3): everything kept about them goes; a content-free record remains.

Their journal, notes, digest, usage, candidates and key are deleted; conversations only
they could read are deleted with their keys; in shared conversations their own turns are
excised (the others' record of the conversation stays, minus what this person said), and
every row that must remain names them only by a keyed pseudonym. The report proves it:
keys destroyed, rows deleted, and a scan of the raw database files for any ciphertext
captured before the erase.

An erase is finished only when its bytes have left the files, not just the tables. If a
reader of an older snapshot (another program) keeps them there past `wait_s`, the erase
stays committed, a pending mark finishes it at the next open, and this raises
ErasureIncomplete: it never reports success while erased bytes remain.
"""

from __future__ import annotations

from typing import Any

from engram.control.session import PersonSession
from engram.model.clock import iso
from engram.model.errors import NotAllowed
from engram.model.progress import Progress
from engram.store import conversation_log, erasure, faults, pending_erasure
from engram.store.erasure import Shredded
from engram.store.pseudonyms import pseudonym

DEFAULT_WAIT_S = pending_erasure.DEFAULT_WAIT_S


def erase_person(
    session: PersonSession,
    confirm: str,
    progress: Progress | None = None,
    *,
    wait_s: float = DEFAULT_WAIT_S,
) -> dict[str, Any]:
    """Erase the session's person; `confirm` must repeat their id exactly (typed confirmation).
    `progress` follows the raw file scan, the long part."""
    if confirm != session.person:
        raise NotAllowed(
            f"To erase {session.person}, confirm by typing that id exactly; nothing was erased."
        )
    store, person = session.store, session.person
    # Someone erasing themself is recorded by pseudonym: the record must not name them.
    actor = pseudonym(store, person) if session.actor == person else session.actor
    tally = Shredded()
    excised_turns = 0
    deleted_conversations = 0
    with store.write() as txn:
        for info in conversation_log.for_person(txn.conn, person):
            if set(info.participants) == {person}:
                tally.merge(erasure.shred_conversation(store, txn, info.id))
                deleted_conversations += 1
            else:
                excised, removed = erasure.excise_author(store, txn, info.id, person, actor)
                excised_turns += excised
                tally.merge(removed)
        tally.merge(erasure.erase_person_rows(store, txn, person))
        record = erasure.record_erasure(
            store,
            txn,
            actor,
            {
                "kind": "person",
                "subject": store.hidden_name(person),
                "alias": pseudonym(store, person),  # what the rows that remain call them
                "rows": tally.rows_deleted,
            },
        )
        renamed = erasure.pseudonymize(store, txn, person)
    faults.crash_point(faults.ERASE_CHECKPOINTED)
    finished = pending_erasure.finish_or_raise(
        store,
        f"{person} was erased (keys destroyed, rows deleted)",
        wait_s=wait_s,
        progress=progress,
    )
    return {
        "person": person,
        "erased_at": iso(store.now()),
        "actor": actor,
        "erasure_record": record,
        "keys_destroyed": tally.keys_destroyed,
        "rows_deleted": tally.rows_deleted,
        "conversations_deleted": deleted_conversations,
        "turns_excised": excised_turns,
        "pseudonymized_rows": renamed["renamed"],
        "clear_ids_in_rows_older_than_pseudonyms": renamed["kept_clear_in_old_rows"],
        **finished.to_json(),
        "readable_remains": False,
    }


def how_checked(report: dict[str, Any]) -> str:
    """How an erasure report's "nothing readable remains" was checked, as one clause list
    (the CLI and the inspector both say it)."""
    parts = []
    rewrite = report.get("page_rewrite") or {}
    if rewrite.get("rewrite") == "complete":
        parts.append(
            f"every page of the database was rewritten from its live rows "
            f"({rewrite.get('pages_after', 0)} pages)"
        )
    if report.get("wal_checkpoint") == "complete":
        parts.append("the write-ahead log was emptied into the file and truncated")
    method = (report.get("raw_file_scan") or {}).get("method")
    if method:
        parts.append(method)
    return "; ".join(parts) or "the keys were destroyed (there is no file to scan)"
