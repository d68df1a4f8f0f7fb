"""Erasing a person (C3): everything kept about them goes; a content-free record remains.

Their journal, notes, digest, usage, candidates and key are deleted; conversations only
they could read are deleted with their keys; in shared conversations their own turns are
excised (the others' record of the conversation stays, minus what this person said). The
report proves it: keys destroyed, rows deleted, and a scan of the raw database files for
any ciphertext captured before the erase.
"""

from __future__ import annotations

from typing import Any

from engram.control.session import PersonSession
from engram.model.clock import iso
from engram.model.errors import NotAllowed
from engram.model.progress import Progress
from engram.store import conversation_log, erasure
from engram.store.erasure import Shredded


def erase_person(
    session: PersonSession, confirm: str, progress: Progress | None = None
) -> dict[str, Any]:
    """Erase the session's person; `confirm` must repeat their id exactly (typed confirmation).
    `progress` follows the raw file scan, the long part."""
    if confirm != session.person:
        raise NotAllowed(
            f"To erase {session.person}, confirm by typing that id exactly; nothing was erased."
        )
    store, person = session.store, session.person
    tally = Shredded()
    excised_turns = 0
    deleted_conversations = 0
    with store.write() as txn:
        for info in conversation_log.for_person(txn.conn, person):
            if set(info.participants) == {person}:
                tally.merge(erasure.shred_conversation(store, txn, info.id))
                deleted_conversations += 1
            else:
                excised, removed = erasure.excise_author(store, txn, info.id, person, session.actor)
                excised_turns += excised
                tally.merge(removed)
        tally.merge(erasure.erase_person_rows(store, txn, person))
        record = erasure.record_erasure(
            store,
            txn,
            session.actor,
            {
                "kind": "person",
                "subject": store.hidden_name(person),
                "rows": tally.rows_deleted,
            },
        )
    scan = erasure.scan_files(store, tally.needles, progress)
    return {
        "person": person,
        "erased_at": iso(store.now()),
        "actor": session.actor,
        "erasure_record": record,
        "keys_destroyed": tally.keys_destroyed,
        "rows_deleted": tally.rows_deleted,
        "conversations_deleted": deleted_conversations,
        "turns_excised": excised_turns,
        **txn.after_erasure,
        "raw_file_scan": scan,
        "readable_remains": scan.get("found", 0) != 0,
    }
