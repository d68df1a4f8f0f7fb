"""Working through many notes at once (issue 21 item 7): delete, change the scope of, or
forget several notes in one write after a preview that lists them, and find every note
about a word or phrase ("Forget everything about…").

A preview names each note with the revision it was read at. Applying it reads every one
again under the person's journal lock and changes nothing unless all still stand as
listed: a note changed or closed since is a conflict (HTTP 409) in one sentence. Each
change is its own journal event, all in one transaction, under the session's actor; each
names how many notes changed `together`, so that an undo (control.undo) takes back the
whole change at once.

Forgetting deletes a note (C2: its interval closes, its record and audit stay) and erases
its words: the payloads of every version's text, of the suggestions those versions were
approved from, and of the reasons they were deleted for are shredded, as a deleted
conversation's notes are (C4), and the erasure is finished (no ciphertext of them left in
the files) before it reports success. A note already closed can be forgotten too: it stays
closed and its words go. Conversations keep what was said in them: delete a conversation
to remove that.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from engram.control import notes as memory_control
from engram.control.session import PersonSession
from engram.control.wording import counted, quoted
from engram.model.errors import InvalidInput, NotFound, StateConflict
from engram.model.event_bodies import Deleted, ScopeChanged
from engram.model.events import EventType as E
from engram.model.events import NewEvent
from engram.model.ids import NoteId
from engram.model.notes import EVERY_ACTIVE_NOTE, EVERY_NOTE, Note, NoteStatus, note_revision
from engram.model.scope import Kind, Scope
from engram.runtime.note_writes import reopened_after
from engram.store import erasure, journal, pending_erasure, projection_state
from engram.store.write_txn import WriteTxn

MAX_NOTES = 5_000  # one transaction; more is several runs, each previewed
MAX_PHRASE_CHARS = 200
MAX_REASON_CHARS = 2_000


class BulkAction(StrEnum):
    """What a bulk change does to each listed note."""

    DELETE = "delete"
    RESCOPE = "rescope"
    FORGET = "forget"


@dataclass(frozen=True)
class ListedNote:
    """A note in a preview, as it stood when read (its revision is checked on apply)."""

    id: NoteId
    revision: int
    text: str | None
    scope: Scope
    kind: Kind
    status: NoteStatus

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "revision": self.revision,
            "text": self.text,
            "scope": self.scope.value,
            "kind": self.kind.value,
            "status": self.status.value,
        }


@dataclass(frozen=True)
class BulkPreview:
    """What a bulk change would do; applying it changes exactly these notes or none."""

    action: BulkAction
    notes: tuple[ListedNote, ...]
    scope: Scope | None = None  # a change of scope: the new one
    about: str | None = None  # "Forget everything about…": the phrase
    skipped: tuple[ListedNote, ...] = ()  # asked for, left alone (closed; already in scope)

    def only(self, ids: Iterable[str]) -> BulkPreview:
        """The same preview with only some of its notes (those left ticked)."""
        keep = set(ids)
        return replace(self, notes=tuple(n for n in self.notes if n.id in keep))

    def sentence(self) -> str:
        """What applying it does, in one sentence."""
        many = counted(len(self.notes), "note")
        about = f" about {quoted(self.about)}" if self.about else ""
        match self.action:
            case BulkAction.DELETE:
                return (
                    f"Delete {many}{about}: each stops being used and its record stays in "
                    "the audit log."
                )
            case BulkAction.RESCOPE:
                return f"Change the scope of {many}{about} to {self.scope}."
            case BulkAction.FORGET:
                return (
                    f"Forget {many}{about}: each is deleted and its words are erased from "
                    "the store for good (the conversations they came from keep what was "
                    "said in them)."
                )

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action.value,
            "scope": None if self.scope is None else self.scope.value,
            "about": self.about,
            "sentence": self.sentence(),
            "notes": [n.to_json() for n in self.notes],
            "skipped": [n.to_json() for n in self.skipped],
        }


@dataclass(frozen=True)
class BulkResult:
    """What a bulk change did."""

    action: BulkAction
    changed: tuple[NoteId, ...]
    reopened: int
    payloads_erased: int
    sentence: str

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action.value,
            "changed": list(self.changed),
            "reopened": self.reopened,
            "payloads_erased": self.payloads_erased,
            "sentence": self.sentence,
        }


def preview(
    session: PersonSession,
    ids: Sequence[str],
    action: BulkAction,
    scope: Scope | None = None,
) -> BulkPreview:
    """What changing these notes would do (nothing is written). Unknown ids are refused;
    closed notes (and, for a change of scope, notes already in it) are listed as skipped —
    except when forgetting, which takes closed notes too."""
    if action is BulkAction.RESCOPE and scope is None:
        raise InvalidInput("Say which scope the notes should get.")
    wanted = list(dict.fromkeys(NoteId(i) for i in ids))
    if not wanted:
        raise InvalidInput("Choose at least one note.")
    if len(wanted) > MAX_NOTES:
        raise InvalidInput(f"At most {MAX_NOTES:,} notes can be changed at once.")
    found = {n.id: n for n in memory_control.notes_by_ids(session, wanted)}
    unknown = [i for i in wanted if i not in found]
    if unknown:
        raise NotFound(f"There is no note {unknown[0]!r} for {session.person}.")
    return _preview(session, [found[i] for i in wanted], action, scope, None)


def about(
    session: PersonSession,
    phrase: str,
    action: BulkAction = BulkAction.FORGET,
    scope: Scope | None = None,
) -> BulkPreview:
    """Every note whose words hold `phrase` as a word or phrase (case does not matter:
    "paris" finds "Paris" and "Paris's", never "comparison"): active and closed ones when
    forgetting, active ones otherwise. Nothing is written."""
    cleaned = " ".join(phrase.split())
    if not cleaned:
        raise InvalidInput("Say what to look for: a word or a phrase.")
    if len(cleaned) > MAX_PHRASE_CHARS:
        raise InvalidInput(f"The phrase may hold at most {MAX_PHRASE_CHARS} characters.")
    every = EVERY_NOTE if action is BulkAction.FORGET else EVERY_ACTIVE_NOTE
    pages = memory_control.matching_text(session, every, cleaned)
    total = pages.finish()
    found = pages.page(0, total)
    texts = memory_control.texts_of(session, found)
    pattern = re.compile(r"(?<!\w)" + re.escape(cleaned.casefold()) + r"(?!\w)")
    matching = [n for n in found if pattern.search((texts.get(n.id) or "").casefold())]
    if len(matching) > MAX_NOTES:
        raise InvalidInput(
            f"{counted(len(matching), 'note')} hold {quoted(cleaned)}; at most {MAX_NOTES:,} "
            "can be changed at once: choose a longer phrase."
        )
    return _preview(session, matching, action, scope, cleaned, texts)


def _preview(
    session: PersonSession,
    notes: Sequence[Note],
    action: BulkAction,
    scope: Scope | None,
    phrase: str | None,
    texts: dict[NoteId, str | None] | None = None,
) -> BulkPreview:
    if texts is None:
        texts = memory_control.texts_of(session, list(notes))
    listed: list[ListedNote] = []
    skipped: list[ListedNote] = []
    for note in notes:
        entry = ListedNote(
            note.id, note_revision(note), texts.get(note.id), note.scope, note.kind, note.status
        )
        if action is BulkAction.FORGET:
            usable = note.is_active or entry.text is not None  # closed: words left to erase
        elif action is BulkAction.RESCOPE:
            usable = note.is_active and note.scope is not scope
        else:
            usable = note.is_active
        (listed if usable else skipped).append(entry)
    return BulkPreview(action, tuple(listed), scope, phrase, tuple(skipped))


def apply(session: PersonSession, shown: BulkPreview, reason: str | None = None) -> BulkResult:
    """Make the previewed change to every listed note in one transaction, or to none: a
    note changed since the preview (another window, an agent, a reviewer) is a conflict
    and nothing is written."""
    if not shown.notes:
        raise InvalidInput("No note is left to change.")
    if reason is not None and len(reason) > MAX_REASON_CHARS:
        raise InvalidInput(f"The reason may hold at most {MAX_REASON_CHARS} characters.")
    store, person, actor = session.store, session.person, session.actor
    erased = reopened = 0
    with store.write() as txn:
        journal.lock(txn, person)
        for listed in shown.notes:
            _still_as_listed(txn, session, listed)
        ids = [n.id for n in shown.notes]
        events: list[NewEvent] = []
        together = len(shown.notes) if len(shown.notes) > 1 else None  # undone as one
        if shown.action is BulkAction.RESCOPE:
            assert shown.scope is not None
            for n in shown.notes:
                body = ScopeChanged(n.id, shown.scope, n.revision, together=together)
                events.append(NewEvent(E.SCOPE_CHANGED, actor, body))
        elif shown.action is BulkAction.DELETE:
            for n in shown.notes:
                deleted = Deleted(n.id, revision=n.revision, together=together)
                events.append(NewEvent(E.DELETED, actor, deleted, text=reason or None))
        else:
            shredded = _words_of(txn, session, ids)
            gone = erasure.shred_journal_payloads(store, txn, person, _all(shredded))
            erased = sum(gone.rows_deleted.values())
            for n in shown.notes:
                forgot = Deleted(
                    n.id, revision=n.revision, shredded=shredded[n.id], together=together
                )
                events.append(NewEvent(E.DELETED, actor, forgot))
        if shown.action is not BulkAction.RESCOPE:
            active = [n.id for n in shown.notes if n.status is NoteStatus.ACTIVE]
            reopen = reopened_after(txn.conn, person, active, actor)
            reopened = len(reopen)
            events += reopen
        journal.append(store, txn, person, events)
        if shown.action is BulkAction.FORGET:
            erasure.record_erasure(
                store,
                txn,
                actor,
                {
                    "kind": "notes",
                    "subject": store.hidden_name(person),
                    "rows": {"journal_payloads": erased},
                },
            )
    done = _done(shown, reopened)
    if shown.action is BulkAction.FORGET:
        pending_erasure.finish_or_raise(store, done.rstrip("."))
    return BulkResult(shown.action, tuple(ids), reopened, erased, done)


def _still_as_listed(txn: WriteTxn, session: PersonSession, listed: ListedNote) -> None:
    now = memory_control.note_in(txn, session, listed.id)
    if now is None or now.status is not listed.status or note_revision(now) != listed.revision:
        raise StateConflict(
            f"The note {quoted(listed.text or '[words erased]')} changed after the preview, "
            "so nothing was changed; look at the notes again and retry."
        )


def _words_of(
    txn: WriteTxn, session: PersonSession, ids: Sequence[NoteId]
) -> dict[NoteId, tuple[int, ...]]:
    """For each note, the journal entries whose payloads hold its words: the text of each
    of its versions, the suggestions they were approved from and the reasons they were
    deleted for."""
    versions: dict[NoteId, list[Note]] = {}
    for note_id in ids:
        chain: list[Note] = []
        back = memory_control.note_in(txn, session, note_id)
        while back is not None and back.id not in {v.id for v in chain}:
            chain.append(back)
            back = (
                memory_control.note_in(txn, session, back.supersedes) if back.supersedes else None
            )
        versions[note_id] = chain
    owner = {v.id: note_id for note_id, chain in versions.items() for v in chain}
    seqs: dict[NoteId, set[int]] = {note_id: set() for note_id in ids}
    for note_id, chain in versions.items():
        for version in chain:
            seqs[note_id].add(version.text_seq)
            closure = version.closure
            if closure is not None and closure.type is E.DELETED:
                seqs[note_id].add(closure.seq)
    for candidate in projection_state.candidates(txn.conn, session.person):
        if candidate.note is not None and candidate.note in owner:
            seqs[owner[candidate.note]].add(candidate.payload_seq)
    return {note_id: tuple(sorted(found)) for note_id, found in seqs.items()}


def _all(shredded: dict[NoteId, tuple[int, ...]]) -> list[int]:
    return sorted({seq for seqs in shredded.values() for seq in seqs})


def _done(shown: BulkPreview, reopened: int) -> str:
    many = counted(len(shown.notes), "note")
    verb = "holds" if reopened == 1 else "hold"
    back = f"; {counted(reopened, 'note')} they had replaced {verb} again" if reopened else ""
    match shown.action:
        case BulkAction.DELETE:
            return f"{many} deleted; their records stay in the audit log{back}."
        case BulkAction.RESCOPE:
            return f"{many} changed to {shown.scope}."
        case BulkAction.FORGET:
            return f"{many} forgotten: deleted, and their words erased{back}."
