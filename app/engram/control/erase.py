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

from engram.control.erasure_report import ErasureReport, FileScan, PageRewrite
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
) -> ErasureReport:
    """Erase the session's person; `confirm` must repeat their id exactly (typed confirmation).
    `progress` follows the raw file scan, the long part. The report carries the verdict."""
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
    return ErasureReport(
        person=person,
        erased_at=iso(store.now()) or "",
        actor=actor,
        erasure_record=record,
        keys_destroyed=tuple(tally.keys_destroyed),
        rows_deleted=dict(tally.rows_deleted),
        conversations_deleted=deleted_conversations,
        turns_excised=excised_turns,
        pseudonymized_rows=renamed.renamed,
        clear_id_rows=dict(renamed.kept_clear),
        wal_checkpoint=finished.wal_checkpoint,
        page_rewrite=PageRewrite.from_json(finished.page_rewrite),
        frames=finished.frames,
        checkpointed=finished.checkpointed,
        asked_others_to_let_go=finished.asked_others_to_let_go,
        raw_file_scan=FileScan.from_json(finished.raw_file_scan),
        pending_erasures=tuple(finished.pending),
    )
