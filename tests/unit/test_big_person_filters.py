"""Issue 17 item 9: the engine filters text search and time travel, with the same results
as the naive filters it replaced (decrypt every note per search, replay the whole journal
per trip to the past), on random journals."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engram.control import note_cache
from engram.control import notes as control
from engram.control.conversations import delete_conversation
from engram.control.session import PersonSession
from engram.engine.fold import fold_as_of
from engram.engine.fold_timeline import FoldTimeline, fold_onward
from engram.engine.note_listing import (
    LazyMatches,
    TextColumn,
    TextMatches,
    counted,
    facet_counts,
    keeps,
)
from engram.engine.unscoped import unscoped_notes
from engram.model.clock import ManualClock
from engram.model.events import Event
from engram.model.ids import PersonId
from engram.model.notes import Note, NoteFilter, NoteStatus
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.note_writes import NoteDraft, learn_note
from engram.store import journal
from engram.store.store import Store
from tests.conftest import PASSPHRASE, START
from tests.journals import PERSON, journals

WORDS = ["tea", "Tea", "coffee", "TEA-time", "café", "CAFÉ", "straße", "STRASSE", "oslo"]
FILTERS = [
    NoteFilter(),
    NoteFilter(statuses=None),
    NoteFilter(statuses=[s for s in NoteStatus if s is not NoteStatus.ACTIVE]),
    NoteFilter(statuses=None, scopes=[Scope.PORTABLE]),
    NoteFilter(kinds=[Kind.PREFERENCE], order="confidence", descending=True),
    NoteFilter(statuses=None, order="valid_to"),
]
NEEDLES = ["", "tea", "TEA", "a", "café", "strasse", "e-t", "zzz", "oslo tea"]


# ---- the pure parts -----------------------------------------------------------------


def _moments(events: list[Event]) -> list[datetime]:
    times = [e.at for e in events]
    return [
        START - timedelta(seconds=1),
        *times,
        *(t + timedelta(milliseconds=500) for t in times),
        times[-1] + timedelta(days=1),
    ]


@settings(max_examples=60, deadline=None)
@given(journals(max_events=60), st.integers(min_value=1, max_value=7), st.data())
def test_item9_timeline_folds_to_what_a_full_replay_gives(
    events: list[Event], spacing: int, data: st.DataObject
) -> None:
    """The held fold's memory at any moment equals fold_as_of over the whole journal (F5),
    whatever the snapshot spacing, however the journal arrived in chunks, and with the
    snapshots thinned out."""
    timeline = FoldTimeline(PERSON, spacing=spacing, max_snapshots=3)
    cut = data.draw(st.integers(min_value=0, max_value=len(events)))
    timeline.extend(events[:cut])
    timeline.detach_head()
    timeline.extend(events[cut:])
    assert timeline.in_time_order
    for moment in _moments(events):
        expected = fold_as_of(events, PERSON, moment)
        if timeline.covers(moment):
            got = timeline.head
        else:
            start = timeline.start_for(moment)
            got = fold_onward(start, (e for e in events if e.seq > start.seq), moment)
        assert got == expected


@settings(max_examples=10, deadline=None)
@given(journals(max_events=4))
def test_item9_timeline_knows_when_times_go_back(events: list[Event]) -> None:
    """A journal whose times go back is not a prefix by time: callers replay it all."""
    assume(len(events) >= 2)
    timeline = FoldTimeline(PERSON)
    events = list(events)
    events[1] = Event(**{**_fields(events[1]), "at": events[0].at - timedelta(seconds=1)})
    timeline.extend(events[:2])
    assert not timeline.in_time_order


def _fields(event: Event) -> dict[str, Any]:
    return {name: getattr(event, name) for name in event.__dataclass_fields__}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab\x00c", max_size=6), max_size=90), st.text("abc", max_size=3))
def test_item9_text_column_finds_the_rows_a_scan_finds(texts: list[str], needle: str) -> None:
    """Jumping from match to match, and the row-by-row test it turns into when matches are
    many, find exactly the rows whose text contains the needle."""
    expected = [i for i, text in enumerate(texts) if needle in text]
    assert TextColumn(texts).rows_containing(needle) == expected
    matches = TextMatches(list(range(len(texts))), TextColumn(texts), needle)
    assert matches.page(1, 2) == expected[1:3]  # found only as far as asked
    assert matches.page(0, 1) == expected[:1]
    assert matches.finish() == len(expected) and matches.complete
    assert matches.page(0, len(texts) + 1) == expected


@settings(max_examples=60, deadline=None)
@given(journals(max_events=50), st.sampled_from(FILTERS), st.lists(st.integers(0, 12), max_size=6))
def test_item9_lazy_pages_are_the_filtered_list(
    events: list[Event], note_filter: NoteFilter, offsets: list[int]
) -> None:
    """A listing's total comes from counts and its pages, asked in any order, are slices of
    the list a full filter gives."""
    notes = unscoped_notes(fold_as_of(events, PERSON, events[-1].at))
    expected = [n for n in notes if keeps(note_filter)(n)]
    listing = LazyMatches(notes, keeps(note_filter), counted(facet_counts(notes), note_filter))
    assert listing.total == len(expected)
    for offset in offsets:
        assert listing.page(offset, 3) == expected[offset : offset + 3]
    assert listing.page(0, len(notes) + 1) == expected


# ---- against the naive filters, on a real store ---------------------------------------


def naive_search(session: PersonSession, f: NoteFilter, needle: str) -> list[Note]:
    """Text search as it was: decrypt every page of the filter's notes and test each."""
    wanted, found, offset = needle.casefold(), [], 0
    while True:
        _, notes = control.page(session, f, offset=offset, limit=7)
        if not notes:
            return found
        texts = control.texts_of(session, notes)
        found += [n for n in notes if wanted in (texts.get(n.id) or "").casefold()]
        offset += len(notes)


def naive_then(session: PersonSession, moment: datetime, f: NoteFilter, needle: str) -> list[Note]:
    """Time travel as it was: replay the whole journal up to the moment, then filter."""
    with session.store.read() as conn:
        events = journal.events(conn, session.person, until=moment)
        notes = unscoped_notes(fold_as_of(events, session.person, moment))
    notes = [n for n in notes if keeps(f)(n)]
    if needle:
        texts = control.texts_of(session, notes)
        notes = [n for n in notes if needle.casefold() in (texts[n.id] or "").casefold()]
    return notes


def _all(pages: control.NotePages) -> list[Note]:
    if isinstance(pages, control.TextPages):
        first = pages.page(0, 2)  # a first page, found before the rest
        rest = pages.finish()
        assert pages.page(0, 2) == first
        return pages.page(0, rest + 1)
    return pages.page(0, pages.total + 1)


OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "add", "learn", "edit", "scope", "delete", "forget", "ask"]),
        st.integers(min_value=0, max_value=10_000),
    ),
    min_size=1,
    max_size=12,
)


@pytest.mark.slow  # about ten seconds: a store per example
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(OPS, st.data())
def test_item9_engine_filters_equal_the_naive_ones_on_random_journals(
    store_path: Path, ops: list[tuple[str, int]], data: st.DataObject
) -> None:
    """Typed text search and time travel, read from the held fold and text index and kept
    current as the journal grows (here or through another handle on the same file, as
    another process would), list exactly the notes the naive filters list: the same notes,
    states and order, for any filter, needle and moment (scopes S1-S4 untouched: the
    inspector lists every scope)."""
    clock = ManualClock(START, step=timedelta(seconds=1))
    if not store_path.exists():
        Store.create(str(store_path), passphrase=PASSPHRASE, clock=clock).close()
    store = Store.open(str(store_path), passphrase=PASSPHRASE, clock=clock)
    other = Store.open(str(store_path), passphrase=PASSPHRASE, clock=clock)
    try:
        person = PersonId(
            f"p{len(list(store_path.parent.glob('*')))}_{data.draw(st.uuids()).hex[:6]}"
        )
        conversation = start_conversation(store, [person]).id
        session = PersonSession.open(store, person, "staff:test")
        there = PersonSession(other, person, "staff:test")
        times: list[datetime] = []
        for op, pick in ops:
            clock.advance(timedelta(seconds=pick % 5))
            active = control.page(session, NoteFilter(), offset=0, limit=100)[1]
            target = active[pick % len(active)].id if active else None
            text = f"{WORDS[pick % len(WORDS)]} {WORDS[(pick // 9) % len(WORDS)]}"
            kind, scope = list(Kind)[pick % 4], list(Scope)[pick % 3]
            if op == "learn" and conversation is not None:
                turn = append_turn(store, conversation, role="user", author=person, text=text)
                learn_note(store, person, NoteDraft(text, kind, scope), conversation, turn)
            elif op == "forget" and conversation is not None:
                delete_conversation(there, conversation)  # the other handle: no cache cleared
                conversation = None
            elif op == "edit" and target is not None:
                control.edit_note(session, target, text=text)
            elif op == "scope" and target is not None:
                control.edit_note(session, target, scope=scope)
            elif op == "delete" and target is not None:
                control.delete_note(session, target)
            elif op == "ask":
                _compare(session, data, times)
            else:
                control.add_note(session, text, kind, scope)
            times.append(store.now())
        _compare(session, data, times)
    finally:
        store.close()
        other.close()


def _compare(session: PersonSession, data: st.DataObject, times: list[datetime]) -> None:
    f = data.draw(st.sampled_from(FILTERS))
    needle = data.draw(st.sampled_from(NEEDLES))
    if needle:
        assert _all(control.matching_text(session, f, needle)) == naive_search(session, f, needle)
    moments = [START - timedelta(seconds=1), *times, session.store.now() + timedelta(days=1)]
    moment = data.draw(st.sampled_from(moments))
    then = control.notes_then(session, moment, f, needle)
    assert _all(then) == naive_then(session, moment, f, needle)
    assert then.total == len(naive_then(session, moment, f, needle))


def test_item9_the_held_index_goes_with_the_store_lock(store: Store) -> None:
    """The decrypted texts live in the store's plaintext caches only: closing (locking)
    the store drops them, as it drops every decrypted log (the person_search decision)."""
    start_conversation(store, [PersonId("ana")])
    ana = PersonSession.open(store, "ana", "staff:test")
    control.add_note(ana, "Likes tea", Kind.PREFERENCE, Scope.DIRECT)
    assert [n.id for n in _all(control.matching_text(ana, NoteFilter(), "TEA"))]
    assert note_cache.CACHE in store.plaintext_caches
    store.close()
    assert store.plaintext_caches == {}


def test_item9_text_shredded_elsewhere_is_not_found_from_the_held_index(store_path: Path) -> None:
    """C4 through another handle on the same file (as another process would): the held
    index sees the deletion in the journal and reads the texts again, so a note whose text
    was shredded is found by no search."""
    Store.create(str(store_path), passphrase=PASSPHRASE).close()
    here = Store.open(str(store_path), passphrase=PASSPHRASE)
    there = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        ana = PersonId("ana")
        talk = start_conversation(here, [ana]).id
        turn = append_turn(here, talk, role="user", author=ana, text="I like tea")
        learn_note(here, ana, NoteDraft("Likes tea", Kind.PREFERENCE, Scope.DIRECT), talk, turn)
        session = PersonSession.open(here, ana, "staff:test")
        every = NoteFilter(statuses=None)
        assert len(_all(control.matching_text(session, every, "tea"))) == 1
        delete_conversation(PersonSession(there, ana, "staff:test"), talk)
        assert _all(control.matching_text(session, every, "tea")) == []
        assert naive_search(session, every, "tea") == []
    finally:
        here.close()
        there.close()


def test_item9_the_warm_up_goes_in_short_steps_and_ends_where_a_full_build_does(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A background warm-up folds and decrypts at most STEP events per step (so a page or
    a detail asked meanwhile waits for one step, not the whole person), and what it built
    answers exactly what the naive filters answer — also after notes written between its
    steps."""
    monkeypatch.setattr(note_cache, "STEP", 4)
    start_conversation(store, [PersonId("ana")])
    ana = PersonSession.open(store, "ana", "staff:test")
    for i in range(9):
        control.add_note(ana, f"{WORDS[i]} note {i}", list(Kind)[i % 4], Scope.DIRECT)
    steps = 0
    while control.warm_up(ana, NoteFilter()):
        steps += 1
        if steps == 2:
            control.add_note(ana, "Tea written while warming up", Kind.FACT, Scope.PORTABLE)
    assert steps >= 4  # 11 events folded 4 at a time, then their texts
    for needle in ("tea", "note", "zzz"):
        assert _all(control.matching_text(ana, NoteFilter(), needle)) == naive_search(
            ana, NoteFilter(), needle
        )
    moment = store.now()
    assert _all(control.notes_then(ana, moment, NoteFilter(statuses=None), "tea")) == naive_then(
        ana, moment, NoteFilter(statuses=None), "tea"
    )
