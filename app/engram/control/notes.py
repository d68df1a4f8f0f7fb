"""Memory control: list, show, add, edit, rescope and delete a person's notes (C1, C2, C5).

This is one of the five modules allowed to read notes without the scope rule (S5): the
person and the staff who support them see everything kept, whatever its scope.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from engram.control import note_cache
from engram.control.disclosure import disclosed_to
from engram.control.session import PersonSession
from engram.control.views import NoteView, confidence_arithmetic, usage_json
from engram.control.wording import quoted
from engram.engine import merge
from engram.engine.fold import fold_as_of
from engram.engine.fold_timeline import fold_onward
from engram.engine.note_listing import (
    LazyMatches,
    TextColumn,
    TextMatches,
    counted,
    facet_counts,
    filter_key,
    keeps,
)
from engram.engine.ranking import rank
from engram.engine.unscoped import unscoped_audience
from engram.engine.unscoped import unscoped_notes as memory_notes
from engram.model.clock import iso, to_micros
from engram.model.errors import InvalidInput, NotFound, StateConflict
from engram.model.event_bodies import (
    CandidateSuggested,
    Contradicted,
    Corrected,
    Deleted,
    NoteAdded,
    Reopened,
    Restated,
    ScopeChanged,
    body_as,
)
from engram.model.events import Cause, Event, NewEvent
from engram.model.events import EventType as E
from engram.model.ids import ConversationId, NoteId, new_note_id
from engram.model.notes import EVERY_NOTE, Note, NoteFilter, PersonMemory, note_revision
from engram.model.scope import Audience, AudienceKind, Durability, Kind, Scope
from engram.runtime import maintenance, memory_tools, search_pool
from engram.runtime.note_writes import (
    NoteDraft,
    check_text,
    draft_of_suggestion,
    note_added,
    reopened_after,
    writable_conversation,
)
from engram.store import journal, projection_notes, projection_state, store_time
from engram.store.store import Store, WriteTxn

OWN_NOTE_CONFIDENCE_BP = 10_000  # the person said it themselves
MAX_REASON_CHARS = 500


def _with_text(store: Store, session: PersonSession, notes: list[Note]) -> list[NoteView]:
    with store.read() as conn:
        texts = journal.texts(store, conn, session.person, [n.text_seq for n in notes])
    return [NoteView(n, texts.get(n.text_seq)) for n in notes]


def own_audience(session: PersonSession) -> Audience:
    """The person's own view of their memory (every scope): what the inspector shows the
    person whose session this is. Agent-facing code never reaches it (issue 18 item 12)."""
    return unscoped_audience(session.person)


def audience_as(session: PersonSession, kind: AudienceKind) -> Audience:
    """The audience simulator's audience of this kind for the session's person: their own
    view for the subject alone, a restricted audience otherwise."""
    if kind is AudienceKind.SUBJECT_ALONE:
        return own_audience(session)
    return Audience.restricted(kind, session.person)


def search_own(session: PersonSession, query: str, limit: int | None) -> dict[str, Any]:
    """memory_search over the person's own view (every scope): the memory API's search,
    which like its listing serves the person's whole memory."""
    return memory_tools.find_items(
        session.store, session.person, own_audience(session), query, limit
    )


def search_own_ends(session: PersonSession) -> datetime | None:
    """When search_own's answers may change with no write at all: the moment the first
    transient note it looks through is over (M3); None when none is."""
    return search_pool.pool_ends(session.store, session.person, own_audience(session))


def list_notes(
    session: PersonSession,
    *,
    include_closed: bool = False,
    as_of: datetime | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[NoteView]:
    """Active notes in ranking order; with include_closed, every interval in creation order.

    With as_of, the journal is replayed up to that moment (time travel).
    """
    store, person = session.store, session.person
    if as_of is not None:
        notes = notes_as_of(session, as_of, include_closed=include_closed)
        end = None if limit is None else offset + limit
        return _with_text(store, session, notes[offset:end])
    listing = EVERY_NOTE if include_closed else NoteFilter()
    with store.read() as conn:
        notes = projection_notes.unscoped_notes(conn, person, listing, limit=limit, offset=offset)
    return _with_text(store, session, notes)


def page(
    session: PersonSession, note_filter: NoteFilter, *, offset: int, limit: int
) -> tuple[int, list[Note]]:
    """A total and one page of notes, without text (a table decrypts only what it shows)."""
    with session.store.read() as conn:
        total = projection_notes.count_notes(conn, session.person, note_filter)
        notes = projection_notes.unscoped_notes(
            conn, session.person, note_filter, limit=limit, offset=offset
        )
    return total, notes


def page_after(
    session: PersonSession, note_filter: NoteFilter, after: tuple[int, str] | None, limit: int
) -> tuple[int, list[Note]]:
    """A total and one keyset page in creation order, after (created_seq, id)."""
    with session.store.read() as conn:
        total = projection_notes.count_notes(conn, session.person, note_filter)
        notes = projection_notes.unscoped_notes_after(
            conn, session.person, note_filter, after, limit
        )
    return total, notes


def page_after_shown(
    session: PersonSession, note_filter: NoteFilter, after: tuple[int, str] | None, limit: int
) -> tuple[int, list[NoteView], bool]:
    """page_after with the page's texts, in one read: the total, the notes shown, and
    whether more follow (the memory API's listing: one snapshot, one round of the store)."""
    store, person = session.store, session.person
    with store.read() as conn:
        total = projection_notes.count_notes(conn, person, note_filter)
        notes = projection_notes.unscoped_notes_after(conn, person, note_filter, after, limit + 1)
        more, notes = len(notes) > limit, notes[:limit]
        texts = journal.texts(store, conn, person, [n.text_seq for n in notes])
    return total, [NoteView(n, texts.get(n.text_seq)) for n in notes], more


def ordered_ids(session: PersonSession, note_filter: NoteFilter) -> list[NoteId]:
    """Every matching note id, in the filter's order (an id-based table's rows)."""
    with session.store.read() as conn:
        return projection_notes.unscoped_note_ids(conn, session.person, note_filter)


def notes_by_ids(session: PersonSession, ids: Sequence[NoteId]) -> list[Note]:
    """This person's notes with these ids, in that order (ids of others are skipped, C1)."""
    with session.store.read() as conn:
        return projection_notes.unscoped_notes_by_ids(conn, session.person, ids)


class NotePages(Protocol):
    """A filtered list of notes that a table reads a page at a time."""

    @property
    def total(self) -> int: ...

    def page(self, offset: int, limit: int) -> list[Note]: ...


@dataclass(frozen=True)
class HeldPages:
    """Notes already at hand (a search in the past)."""

    notes: list[Note]

    @property
    def total(self) -> int:
        return len(self.notes)

    def page(self, offset: int, limit: int) -> list[Note]:
        return self.notes[offset : offset + limit]


def warm_up(session: PersonSession, note_filter: NoteFilter) -> bool:
    """One bounded step of folding the journal and decrypting every note text into memory
    (note_cache), then listing the filter's ids, so that the next text search or time
    travel costs what it shows. Whether more steps remain: run each off the UI thread,
    and the next after whatever else was asked meanwhile."""
    if note_cache.build_step(session.store, session.person):
        return True
    _text_index(session, note_filter)
    with note_cache.person_notes(session.store, session.person) as cache:
        assert cache.timeline is not None
        _listed(cache.timeline.head, cache.memo.setdefault("head", {}))
    return False


def matching_text(session: PersonSession, note_filter: NoteFilter, needle: str) -> TextPages:
    """Notes whose text contains `needle` (case-insensitive), in the filter's order, found
    as far as pages ask (`finish` finds the rest and the total).

    Text is sealed: the first search decrypts every note once into the store's plaintext
    caches (note_cache), and is not cancelled by the next keystroke's search, which would
    only start it again; later ones scan that in memory. Run it off the UI thread.
    """
    ids, texts = _text_index(session, note_filter)
    return TextPages(session, TextMatches(ids, texts, needle.casefold()))


@dataclass(frozen=True)
class TextPages:
    """A text search's notes: pages read from the store as they are found; `total` is
    what is found so far until `finish` has looked at every note."""

    session: PersonSession
    matches: TextMatches[NoteId]

    @property
    def total(self) -> int:
        return self.matches.found()

    @property
    def complete(self) -> bool:
        return self.matches.complete

    def finish(self) -> int:
        """Find every match (off the UI thread); the total."""
        return self.matches.finish()

    def page(self, offset: int, limit: int) -> list[Note]:
        return notes_by_ids(self.session, self.matches.page(offset, limit))


def _text_index(session: PersonSession, note_filter: NoteFilter) -> tuple[list[NoteId], TextColumn]:
    """The filter's ids in order, and beside them each note's case-folded text."""
    with note_cache.person_notes(session.store, session.person, texts=True) as cache:
        key = ("ids", filter_key(note_filter))
        held = cache.memo.get(key)
        if held is None:
            ids = ordered_ids(session, note_filter)
            held = cache.memo[key] = (ids, TextColumn(_texts_beside(session, cache, ids)))
    return held


def _texts_beside(
    session: PersonSession, cache: note_cache.PersonNotes, ids: Sequence[NoteId]
) -> list[str]:
    """The case-folded text of each note, in the order given (a held cache's caller)."""
    assert cache.timeline is not None and cache.texts is not None
    by_id = cache.memo.get("texts")
    if by_id is None:
        seqs = cache.texts
        head = memory_notes(cache.timeline.head)
        by_id = cache.memo["texts"] = {n.id: seqs.get(n.text_seq, "") for n in head}
    missing = [i for i in ids if i not in by_id]  # written since the cache caught up
    if missing:
        notes = notes_by_ids(session, missing)
        by_id = {**by_id, **{i: (t or "").casefold() for i, t in texts_of(session, notes).items()}}
    return [by_id.get(i, "") for i in ids]


def notes_then(
    session: PersonSession,
    moment: datetime,
    note_filter: NoteFilter,
    needle: str = "",
) -> NotePages:
    """Time travel for a table: the notes as they stood at `moment` that pass the filter's
    status, scope and kind (and contain `needle`), in creation order. Pages are found as
    they are asked for; the total comes from counts."""
    then = _memory_then(session, moment)
    if then is None:  # a journal whose times go back: replay it all, as ever
        ordered = notes_as_of(session, moment, include_closed=True)
        memo: dict[object, Any] = {}
    else:
        _check_clock(session)
        memory, memo = then
        ordered = _listed(memory, memo)
    keep = keeps(note_filter)
    if not needle and note_filter.created_after_seq is None:
        if "counts" not in memo:
            memo["counts"] = facet_counts(ordered)
        return LazyMatches(ordered, keep, counted(memo["counts"], note_filter))
    if not needle:  # notes created since a point: few, found at once
        return HeldPages([n for n in ordered if keep(n)])
    if "texts" not in memo:
        with note_cache.person_notes(session.store, session.person, texts=True) as cache:
            memo["texts"] = _texts_beside(session, cache, [n.id for n in ordered])
    wanted = needle.casefold()
    texts = memo["texts"]
    return HeldPages(
        [n for n, text in zip(ordered, texts, strict=True) if wanted in text and keep(n)]
    )


def _listed(memory: PersonMemory, memo: dict[object, Any]) -> list[Note]:
    """A memory's notes in creation order, and their counts, kept in its memo."""
    if "ordered" not in memo:
        memo["ordered"] = memory_notes(memory)
        memo["counts"] = facet_counts(memo["ordered"])
    return memo["ordered"]  # type: ignore[no-any-return]


PAST_MOMENTS_HELD = 2  # folded past moments kept (the detail of a note reads the same one)


def _memory_then(
    session: PersonSession, moment: datetime
) -> tuple[PersonMemory, dict[object, Any]] | None:
    """The memory as of `moment` from the held fold, and a memo for what is derived from
    it; None when the journal's times go back (then only a full replay is exact)."""
    store, person = session.store, session.person
    with note_cache.person_notes(store, person) as cache:
        timeline = cache.timeline
        assert timeline is not None
        if not timeline.in_time_order:
            return None
        if timeline.covers(moment):
            return timeline.head, cache.memo.setdefault("head", {})
        key = ("then", moment)
        held = cache.memo.get(key)
        if held is None:
            start = timeline.start_for(moment)
            with store.read() as conn:
                events = journal.events(conn, person, after_seq=start.seq, until=moment)
                memory = fold_onward(start, events, moment)
            past = [k for k in cache.memo if isinstance(k, tuple) and k[0] == "then"]
            for old in past[: max(0, len(past) - PAST_MOMENTS_HELD + 1)]:
                del cache.memo[old]
            held = cache.memo[key] = (memory, {})
        return held


def notes_as_of(session: PersonSession, moment: datetime, *, include_closed: bool) -> list[Note]:
    """Time travel: the notes exactly as they stood at `moment`, by replaying the journal
    (from the held fold's nearest snapshot before it, note_cache)."""
    notes = memory_notes(_memory_as_of(session, moment))
    return notes if include_closed else rank(notes)


def _memory_as_of(session: PersonSession, moment: datetime) -> PersonMemory:
    then = _memory_then(session, moment)
    if then is not None:
        _check_clock(session)
        return then[0]
    with session.store.read() as conn:
        memory = fold_as_of(
            journal.events(conn, session.person, until=moment), session.person, moment
        )
    _check_clock(session)
    return memory


def _check_clock(session: PersonSession) -> None:
    """Time travel reads the moment on the journal's dates: say if they run ahead."""
    store, person = session.store, session.person
    with store.read() as conn:
        newest = store_time.newest(conn, person)
    if newest is not None:
        store.saw_clock(store_time.behind(f"journal:{person}", newest, to_micros(store.now())))


def texts_of(session: PersonSession, notes: list[Note]) -> dict[NoteId, str | None]:
    """Decrypt the text of some notes."""
    return {view.note.id: view.text for view in _with_text(session.store, session, notes)}


def candidate_note_events(
    txn: WriteTxn, session: PersonSession, suggested: Event, text: str
) -> tuple[list[NewEvent], NoteId]:
    """The events an approved candidate becomes (P6), inside the caller's write.

    A restatement of a note still active adds a source; otherwise a new note, which closes
    the note it contradicts — or that note's newest version, if someone corrected it since;
    a note already closed otherwise needs no closing.
    """
    body = body_as(suggested.body, CandidateSuggested)
    cause = suggested.cause
    target = body.restates or body.contradicts
    held = _newest_version(txn, session, target) if target else None
    if body.restates and held is not None:
        restated = Restated(held.id, cause)
        return [NewEvent(E.RESTATED, session.actor, restated, cause)], held.id
    # A candidate suggested under a key-value face's key becomes the note that key names
    # (control.keyed_notes), unless another write took that id first.
    wanted = body.as_note
    free = wanted if wanted and note_in(txn, session, wanted) is None else None
    added = note_added(draft_of_suggestion(body, text), session.actor, cause, body.origin, free)
    note = body_as(added.body, NoteAdded).note
    events = [added]
    if body.contradicts and held is not None:
        events.append(NewEvent(E.CONTRADICTED, session.actor, Contradicted(held.id, note), cause))
    return events, note


def _newest_version(txn: WriteTxn, session: PersonSession, note_id: NoteId) -> Note | None:
    """The active note `note_id` became through a person's corrections and undos (the same
    fact, new words), or None if it was closed any other way."""
    note = projection_notes.unscoped_note(txn.conn, session.person, note_id)
    while (
        note is not None
        and note.closure is not None
        and note.closure.type in (E.CORRECTED, E.UNDONE)
        and note.superseded_by
    ):
        note = projection_notes.unscoped_note(txn.conn, session.person, note.superseded_by)
    return note if note is not None and note.is_active else None


def current_version(session: PersonSession, note_id: NoteId) -> Note | None:
    """The active note `note_id` has become: itself while open, else what closed it in its
    place — a new version (corrections and undos, C5), the newer statement (F1), the note a
    merge kept (M2) — followed to the end. None when it ended otherwise (deleted, retired)
    or is not one of this person's notes (C1)."""
    seen: set[NoteId] = set()
    with session.store.read() as conn:
        note = projection_notes.unscoped_note(conn, session.person, note_id)
        while note is not None and not note.is_active and note.id not in seen:
            seen.add(note.id)
            after = note.superseded_by or (note.closure.by_note if note.closure else None)
            note = projection_notes.unscoped_note(conn, session.person, after) if after else None
    return note if note is not None and note.is_active else None


def note_in(txn: WriteTxn, session: PersonSession, note_id: NoteId) -> Note | None:
    """One of this person's notes read inside the caller's write (None if unknown, C1)."""
    return projection_notes.unscoped_note(txn.conn, session.person, note_id)


def get_note(session: PersonSession, note_id: str) -> Note:
    """One of this person's notes; NotFound for an unknown id or another person's note (C1)."""
    with session.store.read() as conn:
        note = projection_notes.unscoped_note(conn, session.person, NoteId(note_id))
    if note is None:
        raise NotFound(f"There is no note {note_id!r} for {session.person}.")
    return note


def _lineage(note: Note, lookup: Callable[[NoteId], Note | None]) -> list[Note]:
    chain = [note]
    back = note
    while back.supersedes:
        found = lookup(back.supersedes)
        if found is None:
            break
        chain.insert(0, found)
        back = found
    ahead = note
    while ahead.superseded_by:
        found = lookup(ahead.superseded_by)
        if found is None:
            break
        chain.append(found)
        ahead = found
    return chain


def show_note(
    session: PersonSession, note_id: str, as_of: datetime | None = None
) -> dict[str, Any]:
    """A note with its versions, sources, corroborators, confidence arithmetic and usage.

    With `as_of`, the note exactly as it stood at that moment (time travel): its state,
    versions, history and usage then, by replaying the journal up to it; NotFound if it
    did not exist yet.
    """
    if as_of is None:
        note = get_note(session, note_id)
        with session.store.read() as conn:
            lineage = _lineage(
                note, lambda other: projection_notes.unscoped_note(conn, session.person, other)
            )
            used = projection_state.note_usage(conn, session.person, note.id)
    else:
        memory = _memory_as_of(session, as_of)
        found = memory.unscoped_note(NoteId(note_id))
        if found is None:
            raise NotFound(f"Note {note_id} did not exist yet on {iso(as_of)}.")
        note = found
        lineage = _lineage(note, memory.unscoped_note)
        with session.store.read() as conn:
            used = [
                u
                for u in projection_state.note_usage(conn, session.person, note.id)
                if u.at <= as_of
            ]
    versions = _with_text(session.store, session, lineage)
    current = next(v for v in versions if v.note.id == note.id)
    history: list[dict[str, Any]] = [
        {
            "seq": note.created_seq,
            "at": iso(note.valid_from),
            "type": "created",
            "actor": note.actor,
        }
    ]
    history += [
        {"seq": c.seq, "at": iso(c.at), "type": c.type.value, "actor": c.actor, "detail": c.detail}
        for c in note.changes
    ]
    if note.closure:
        history.append(
            {
                "seq": note.closure.seq,
                "at": iso(note.closure.at),
                "type": note.closure.type.value,
                "actor": note.closure.actor,
                "detail": note.closure.by_note or "",
            }
        )
    return {
        **current.to_json(),
        "versions": [v.to_json() for v in versions],
        "confidence": confidence_arithmetic(note),
        "usage": [usage_json(u) for u in used],
        # Every turn, audience and agent that received it (issue 21 item 6).
        "disclosed": disclosed_to(session.store, session.person, used),
        "history": history,
    }


def _open_note(session: PersonSession, note_id: str) -> Note:
    note = get_note(session, note_id)
    if not note.is_active:
        named = quoted(texts_of(session, [note]).get(note.id))  # its words, not its id
        raise StateConflict(
            f"The note {named} is already closed ({note.status.value}); only active notes "
            "can be changed."
        )
    return note


def _still_open(session: PersonSession, txn: WriteTxn, note_id: NoteId) -> Note:
    """Under the person's journal lock, the note is still open: a writer that changed or
    closed it between our read and this write won the race, and this one is a conflict
    with the note's state (HTTP 409) in one sentence, never the journal's refusal. The
    note as it stands under the lock."""
    journal.lock(txn, session.person)
    now = projection_notes.unscoped_note(txn.conn, session.person, note_id)
    if now is None or not now.is_active:
        return _open_note(session, note_id)  # says which, in its sentence
    return now


def add_note(
    session: PersonSession,
    text: str,
    kind: Kind,
    scope: Scope,
    *,
    durability: Durability = Durability.LASTING,
    confidence_bp: int | None = None,
    conversation: ConversationId | None = None,
    topic: str | None = None,
    create_person: bool = False,
    note_id: NoteId | None = None,
) -> NoteId:
    """A person's own note, optionally citing the conversation it comes from (W1). With
    `create_person`, a person the store has not seen yet is created in the same write, under
    the session's actor, so a failed note leaves no empty person behind. `note_id`: the id
    the note takes (control.keyed_notes derives one from a caller's key), new if None."""
    draft = NoteDraft(
        text=text,
        kind=kind,
        scope=scope,
        durability=durability,
        confidence_bp=OWN_NOTE_CONFIDENCE_BP if confidence_bp is None else confidence_bp,
        topic=topic,
    )
    store = session.store
    with store.write() as txn:
        if create_person:
            journal.ensure_person(store, txn, session.person, actor=session.actor)
        cause = None
        if conversation is not None:
            writable_conversation(txn, session.person, conversation)
            cause = Cause(conversation)
        event = note_added(draft, session.actor, cause, conversation, note_id)
        journal.append(store, txn, session.person, [event])
    return body_as(event.body, NoteAdded).note


def edit_note(
    session: PersonSession, note_id: str, *, text: str | None = None, scope: Scope | None = None
) -> NoteId:
    """C5: a text edit is a new version (a new note id) and closes the old one; a scope-only
    change stays on the same note. The same words again are no change, on every face: the
    note keeps its id, which a host may hold (issue 18 item 7). Returns the id that now
    holds."""
    if text is None and scope is None:
        raise InvalidInput("Say what to change: give a new text, a new scope, or both.")
    note = _open_note(session, note_id)
    store = session.store
    if text is not None:
        cleaned = check_text(text)
        if cleaned == (texts_of(session, [note])[note.id] or "").strip():
            text = None  # the same words: at most a scope change
            if scope is None:
                return note.id
    if text is None:
        assert scope is not None
        if scope is note.scope:
            return note.id
        with store.write() as txn:
            revision = note_revision(_still_open(session, txn, note.id))
            rescoped = ScopeChanged(note.id, scope, revision)
            event = NewEvent(E.SCOPE_CHANGED, session.actor, rescoped)
            journal.append(store, txn, session.person, [event])
        return note.id
    cleaned = check_text(text)
    with store.write() as txn:
        revision = note_revision(_still_open(session, txn, note.id))
        body = Corrected(note.id, new_note_id(), scope, revision=revision)
        event = NewEvent(E.CORRECTED, session.actor, body, text=cleaned)
        journal.append(store, txn, session.person, [event])
    return body.note


def delete_note(session: PersonSession, note_id: str, reason: str | None = None) -> None:
    """C2: deleting closes the note's interval; the record and its audit stay. Each change
    records the note's revision it was made against (issue 21 item 3)."""
    note = _open_note(session, note_id)
    if reason is not None and len(reason) > MAX_REASON_CHARS:
        raise InvalidInput(f"The reason may hold at most {MAX_REASON_CHARS} characters.")
    with session.store.write() as txn:
        revision = note_revision(_still_open(session, txn, note.id))
        body = Deleted(note.id, revision=revision)
        event = NewEvent(E.DELETED, session.actor, body, text=reason or None)
        reopen = reopened_after(txn.conn, session.person, [note.id], session.actor)
        journal.append(session.store, txn, session.person, [event, *reopen])


def notes_touching(session: PersonSession, conversation: ConversationId) -> list[NoteView]:
    """Notes learned in or corroborated by a conversation, with text (cascade preview)."""
    with session.store.read() as conn:
        notes = projection_notes.unscoped_notes_touching(conn, session.person, conversation)
    return _with_text(session.store, session, notes)


def reopening(
    session: PersonSession, closing: Sequence[NoteId], conversation: ConversationId
) -> list[tuple[NoteView, NoteId]]:
    """Notes that would reopen if `closing` closed with `conversation` (cascade preview):
    each with the note whose closing brings it back."""
    with session.store.read() as conn:
        events = reopened_after(conn, session.person, closing, session.actor, None, [conversation])
        bodies = [body_as(e.body, Reopened) for e in events]
        after = {b.note: b.after for b in bodies}
        notes = projection_notes.unscoped_notes_by_ids(conn, session.person, list(after))
    return [(view, after[view.note.id]) for view in _with_text(session.store, session, notes)]


def all_notes(session: PersonSession) -> list[NoteView]:
    """Every note, any status, with text (export)."""
    with session.store.read() as conn:
        notes = projection_notes.unscoped_notes(conn, session.person, EVERY_NOTE)
    return _with_text(session.store, session, notes)


def profile_document(session: PersonSession) -> str:
    """The person's profile document (M1) as text: built from the notes it names, so a
    deleted note or conversation leaves nothing of it behind. Empty before the first."""
    with session.store.read() as conn:
        return profile_document_in(session, conn)


def profile_document_in(session: PersonSession, conn: Any) -> str:
    """`profile_document`, read inside a snapshot the caller holds (an export)."""
    store, person = session.store, session.person
    profile = maintenance.current_profile(conn, person)
    if not profile:
        return ""
    notes = projection_notes.unscoped_notes_by_ids(conn, person, list(profile.ids()))
    texts = journal.texts(store, conn, person, [n.text_seq for n in notes])
    shown = {str(n.id): texts.get(n.text_seq) for n in notes if n.is_active}
    return merge.profile_document(profile, shown)
