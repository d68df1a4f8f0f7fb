"""Issue 18 item 10: event bodies are typed, and their on-disk JSON is pinned.

Each journal event type has one body class (model/event_bodies.py); the store encodes it
when it appends and decodes it when it reads. The JSON below is what a store has always
written for each type, byte for byte (the chain hashes and signs it, so an old store keeps
opening only while these stay): a change to the format fails here. The older variants an
old store still holds decode too, and encode back to the very same JSON.
"""

from __future__ import annotations

import json
from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from engram.engine.fold import fold
from engram.model.event_bodies import (
    BODY_CLASSES,
    BlockSeen,
    CandidateApplied,
    CandidateReviewed,
    CandidateSuggested,
    Contradicted,
    ConversationDeleted,
    Corrected,
    Deleted,
    DigestLineAdded,
    DroppedItem,
    DuplicateRemoved,
    EventBody,
    Exported,
    ExtractionCheckpoint,
    ItemUsed,
    Merged,
    NoteAdded,
    PersonCreated,
    PlacedNote,
    ProfileRebuilt,
    Reopened,
    Restated,
    Retired,
    ReviewCopyMade,
    ReviewImported,
    ScopeChanged,
    Undone,
    decode_body,
)
from engram.model.events import Cause, Event, EventType, NewEvent
from engram.model.ids import CandidateId, ConversationId, NoteId, PersonId, TurnId
from engram.model.notes import Change, NoteStatus, PersonMemory
from engram.model.scope import AudienceKind, Durability, Kind, Scope
from engram.store import codec, crypto, journal, schema
from engram.store.store import Store
from tests.conftest import START

E = EventType
PERSON = PersonId("ana")
N = NoteId
C1, C2, C9 = ConversationId("c_1"), ConversationId("c_2"), ConversationId("c_9")
T1, T2 = TurnId("t_1"), TurnId("t_2")

# One journal, in order from seq 2 (seq 1 is the person's creation): every event type at
# least once, each with the exact JSON the store writes for it and the typed body it holds.
JOURNAL: list[tuple[EventType, str, EventBody]] = [
    (
        E.NOTE_ADDED,
        '{"confidence_bp":6000,"durability":"lasting","kind":"fact","note":"n_1",'
        '"origin":"c_1","scope":"direct","source":{"conversation":"c_1","turn":"t_1"},'
        '"topic":"home"}',
        NoteAdded(
            N("n_1"), Kind.FACT, Scope.DIRECT, Durability.LASTING, 6000, "home", C1, Cause(C1, T1)
        ),
    ),
    (
        E.NOTE_ADDED,
        '{"confidence_bp":5000,"durability":"transient","kind":"preference","note":"n_2",'
        '"scope":"unspecified"}',
        NoteAdded(N("n_2"), Kind.PREFERENCE, Scope.UNSPECIFIED, Durability.TRANSIENT, 5000),
    ),
    (
        E.RESTATED,
        '{"note":"n_2","source":{"conversation":"c_2","turn":null}}',
        Restated(N("n_2"), Cause(C2)),
    ),
    (
        E.NOTE_ADDED,
        '{"confidence_bp":7000,"durability":"lasting","kind":"fact","note":"n_3",'
        '"scope":"unspecified"}',
        NoteAdded(N("n_3"), Kind.FACT, Scope.UNSPECIFIED, Durability.LASTING, 7000),
    ),
    (E.CONTRADICTED, '{"new":"n_3","old":"n_2"}', Contradicted(N("n_2"), N("n_3"))),
    (
        E.CORRECTED,
        '{"note":"n_4","old":"n_1","scope":"portable"}',
        Corrected(N("n_1"), N("n_4"), Scope.PORTABLE),
    ),
    (E.SCOPE_CHANGED, '{"note":"n_4","scope":"direct"}', ScopeChanged(N("n_4"), Scope.DIRECT)),
    (
        E.UNDONE,
        '{"action":"rescope","note":"n_4","scope":"portable","undoes":8}',
        Undone(8, "rescope", note=N("n_4"), scope=Scope.PORTABLE),
    ),
    (
        E.NOTE_ADDED,
        '{"confidence_bp":6000,"durability":"lasting","kind":"fact","note":"n_5",'
        '"scope":"portable"}',
        NoteAdded(N("n_5"), Kind.FACT, Scope.PORTABLE, Durability.LASTING, 6000),
    ),
    (
        E.NOTE_ADDED,
        '{"confidence_bp":6000,"durability":"lasting","kind":"fact","note":"n_6",'
        '"scope":"portable"}',
        NoteAdded(N("n_6"), Kind.FACT, Scope.PORTABLE, Durability.LASTING, 6000),
    ),
    (E.MERGED, '{"into":"n_5","merged":["n_6"]}', Merged(N("n_5"), (N("n_6"),))),
    (
        E.NOTE_ADDED,
        '{"confidence_bp":6000,"durability":"transient","kind":"open_thread","note":"n_7",'
        '"scope":"direct"}',
        NoteAdded(N("n_7"), Kind.OPEN_THREAD, Scope.DIRECT, Durability.TRANSIENT, 6000),
    ),
    (E.RETIRED, '{"note":"n_7"}', Retired(N("n_7"))),
    (
        E.NOTE_ADDED,
        '{"confidence_bp":6000,"durability":"lasting","kind":"fact","note":"n_8",'
        '"scope":"portable"}',
        NoteAdded(N("n_8"), Kind.FACT, Scope.PORTABLE, Durability.LASTING, 6000),
    ),
    (
        E.DUPLICATE_REMOVED,
        '{"kept":"n_5","note":"n_8"}',
        DuplicateRemoved(N("n_8"), N("n_5")),
    ),
    (E.DELETED, '{"note":"n_3"}', Deleted(N("n_3"))),
    (
        E.REOPENED,
        '{"after":"n_3","note":"n_2","without_sources":["c_2"]}',
        Reopened(N("n_2"), N("n_3"), (C2,)),
    ),
    (
        E.UNDONE,
        '{"action":"delete","new":"n_3","recloses":["n_2"],"restored":"n_3","undoes":17}',
        Undone(17, "delete", restored=N("n_3"), new=N("n_3"), recloses=(N("n_2"),)),
    ),
    (
        E.PROFILE_REBUILT,
        '{"language":"n_5","preferences":["n_4"],"tone":null}',
        ProfileRebuilt(N("n_5"), None, (N("n_4"),)),
    ),
    (
        E.DIGEST_LINE_ADDED,
        '{"conversation":"c_1","scope":"unspecified"}',
        DigestLineAdded(C1, Scope.UNSPECIFIED),
    ),
    (
        E.CONVERSATION_DELETED,
        '{"closed":["n_5"],"conversation":"c_9","kept_by_others":true,"shredded":[21],'
        '"trimmed":["n_4"]}',
        ConversationDeleted(C9, (N("n_5"),), (N("n_4"),), (21,), kept_by_others=True),
    ),
    (
        E.CANDIDATE_SUGGESTED,
        '{"as_note":"n_10","candidate":"m_1","confidence_bp":6500,"contradicts":"n_2",'
        '"durability":"lasting","extractor":"rules","kind":"fact","origin":"c_1",'
        '"restates":"n_4","scope":"direct","source":{"conversation":"c_1","turn":"t_2"},'
        '"topic":"work"}',
        CandidateSuggested(
            CandidateId("m_1"),
            Kind.FACT,
            Scope.DIRECT,
            Durability.LASTING,
            6500,
            "rules",
            "work",
            C1,
            Cause(C1, T2),
            restates=N("n_4"),
            contradicts=N("n_2"),
            as_note=N("n_10"),
        ),
    ),
    (
        E.CANDIDATE_REVIEWED,
        '{"candidate":"m_1","decision":"approved","revision":1}',
        CandidateReviewed(CandidateId("m_1"), 1, "approved"),
    ),
    (
        E.CANDIDATE_APPLIED,
        '{"candidate":"m_1","note":"n_4"}',
        CandidateApplied(CandidateId("m_1"), N("n_4")),
    ),
    (
        E.EXTRACTION_CHECKPOINT,
        '{"conversation":"c_1","turns":["t_1","t_2"]}',
        ExtractionCheckpoint(C1, (T1, T2)),
    ),
    (
        E.ITEM_USED,
        '{"audience":"subject_alone","budget":1200,"digest":[21],"dropped":[{"note":"n_3",'
        '"reason":"over budget","what":"note"},{"line":21,"reason":"over budget",'
        '"what":"digest line"}],"notes":["n_4"],"placed":[{"note":"n_4","rank":1,'
        '"section":"notes"}],"readable":true,"used":345,"via":"assembly"}',
        ItemUsed(
            (N("n_4"),),
            "assembly",
            BlockSeen(
                (PlacedNote(N("n_4"), 1, "notes"),),
                (
                    DroppedItem("note", "over budget", note=N("n_3")),
                    DroppedItem("digest line", "over budget", line=21),
                ),
                (21,),
                AudienceKind.SUBJECT_ALONE,
                1200,
                345,
                True,
            ),
        ),
    ),
    (
        E.ITEM_USED,
        '{"notes":["n_4","n_3"],"via":"search"}',
        ItemUsed((N("n_4"), N("n_3")), "search"),
    ),
    (
        E.EXPORTED,
        '{"failed":true,"to":"stdout","what":"access_report"}',
        Exported("access_report", "stdout", failed=True),
    ),
    (E.EXPORTED, '{"to":"file","what":"export"}', Exported("export", "file")),
    # Issue 21 items 2-4: an offline review's record in the copy, and its return.
    (
        E.REVIEW_COPY_MADE,
        '{"copy":"s_2","copy_key":"bb","head":"cc","signature":"dd","source":"s_1",'
        '"source_key":"aa","taken_at":"2026-12-02T10:00:00Z","through":41}',
        ReviewCopyMade("s_1", "aa", "s_2", "bb", 41, "cc", "2026-12-02T10:00:00Z", "dd"),
    ),
    (
        E.REVIEW_IMPORTED,
        '{"candidate":"c_1","copy":"s_2","decided_at":"2026-12-02T11:00:00Z",'
        '"decision":"approved","decision_seq":43,"imported_by":"staff:dana",'
        '"outcome":"applied"}',
        ReviewImported(
            "s_2",
            43,
            "approved",
            "2026-12-02T11:00:00Z",
            "applied",
            "staff:dana",
            candidate=CandidateId("c_1"),
        ),
    ),
    (
        E.UNDONE,
        '{"action":"edit","new":"n_9","note":"n_4","restored":"n_1","undoes":7}',
        Undone(7, "edit", note=N("n_4"), restored=N("n_1"), new=N("n_9")),
    ),
]
PERSON_CREATED = (E.PERSON_CREATED, "{}", PersonCreated())

# Bodies older stores hold that today's writers no longer write: each decodes, and encodes
# back to exactly what is on disk (an export of an old store shows what it holds).
OLDER: list[tuple[EventType, str, EventBody]] = [
    (E.DIGEST_LINE_ADDED, '{"conversation":"c_1"}', DigestLineAdded(C1)),  # before scopes
    (E.ITEM_USED, '{"notes":["n_1"],"via":"assembly"}', ItemUsed((N("n_1"),), "assembly")),
    (E.ITEM_USED, '{"notes":["n_1"]}', ItemUsed((N("n_1"),))),  # no via: assembly
    (
        E.CANDIDATE_SUGGESTED,  # before durability, confidence and the extractor's name
        '{"candidate":"m_1","kind":"fact","scope":"direct"}',
        CandidateSuggested(CandidateId("m_1"), Kind.FACT, Scope.DIRECT),
    ),
    (
        E.UNDONE,  # a deletion undone before issue 17: a restored copy under a new id
        '{"action":"delete","new":"n_2","restored":"n_1","undoes":2}',
        Undone(2, "delete", restored=N("n_1"), new=N("n_2")),
    ),
    (
        E.CORRECTED,  # an edit that named its kind
        '{"kind":"preference","note":"n_2","old":"n_1"}',
        Corrected(N("n_1"), N("n_2"), kind=Kind.PREFERENCE),
    ),
]


def _stored_bodies(store: Store) -> list[tuple[str, str]]:
    with store.read() as conn:
        rows = conn.execute(
            select(schema.journal.c.type, schema.journal.c.body)
            .where(schema.journal.c.person == PERSON)
            .order_by(schema.journal.c.seq)
        )
        return [(r.type, r.body) for r in rows]


def _write_journal(store: Store) -> None:
    with store.write() as txn:
        journal.ensure_person(store, txn, PERSON)
    for kind, _, body in JOURNAL:
        text = "words" if kind in (E.NOTE_ADDED, E.CORRECTED, E.DIGEST_LINE_ADDED) else None
        with store.write() as txn:
            journal.append(store, txn, PERSON, [NewEvent(kind, "staff:dana", body, text=text)])


def test_issue18_item10_the_store_writes_each_event_types_json_byte_for_byte(
    store: Store,
) -> None:
    """Known answers: what the store writes for every event type, as the literal JSON an
    old store holds (a changed key, value or order fails)."""
    _write_journal(store)
    expected = [(kind.value, text) for kind, text, _ in [PERSON_CREATED, *JOURNAL]]
    assert _stored_bodies(store) == expected
    assert {kind for kind, _, _ in [PERSON_CREATED, *JOURNAL]} == set(EventType)


def test_issue18_item10_reading_decodes_the_stored_json_into_typed_bodies(store: Store) -> None:
    """The store decodes each stored body with the catalogue: readers get the typed body,
    equal to the one written, and the journal folds (replays) as it did."""
    _write_journal(store)
    with store.read() as conn:
        events = list(journal.events(conn, PERSON))
    assert [(e.type, e.body) for e in events] == [
        (kind, body) for kind, _, body in [PERSON_CREATED, *JOURNAL]
    ]
    memory = fold(events, PersonMemory(PERSON))
    restored = memory.unscoped_note(N("n_9"))
    assert restored is not None and restored.is_active and restored.supersedes == "n_4"
    back = memory.unscoped_note(N("n_3"))  # its deletion undone: n_2 contradicted again
    assert back is not None and back.is_active
    assert memory.unscoped_note(N("n_2")).status is NoteStatus.CONTRADICTED  # type: ignore[union-attr]


def test_issue18_item10_every_known_answer_decodes_and_encodes_back() -> None:
    """Each literal, today's or an older variant's, decodes to its typed body and encodes
    back to the same bytes."""
    for kind, text, body in [PERSON_CREATED, *JOURNAL, *OLDER]:
        decoded = decode_body(kind, json.loads(text))
        assert decoded == body, kind
        assert crypto.canonical_json(decoded.to_json()) == text, kind


def test_issue18_item10_every_event_type_has_one_body_class() -> None:
    """The catalogue covers every event type, each with a class of its own, and an event
    with another type's body is refused when made."""
    assert set(BODY_CLASSES) == set(EventType)
    assert len(set(BODY_CLASSES.values())) == len(EventType)
    try:
        NewEvent(E.DELETED, "x", Retired(N("n_1")))
    except TypeError as refusal:
        assert "Deleted" in str(refusal)
    else:
        raise AssertionError("a deletion carrying a retirement's body was made")


def test_issue18_item10_a_scope_change_keeps_its_stored_words_and_reads_back_typed() -> None:
    """A stored note keeps a scope change as the words "direct -> portable" (its on-disk
    shape); reading it back gives the scopes typed, so undo never parses them."""
    events = [
        (E.NOTE_ADDED, NoteAdded(N("n_1"), Kind.FACT, Scope.DIRECT, Durability.LASTING, 6000)),
        (E.SCOPE_CHANGED, ScopeChanged(N("n_1"), Scope.PORTABLE)),
    ]
    memory = fold(
        [
            Event(PERSON, seq, START + timedelta(seconds=seq), "ana", kind, body)
            for seq, (kind, body) in enumerate(events, start=1)
        ],
        PersonMemory(PERSON),
    )
    note = memory.unscoped_note(N("n_1"))
    assert note is not None
    stored = json.loads(codec.note_to_json(note))
    assert stored["changes"][0][2:] == ["scope_changed", "ana", "direct -> portable"]
    (change,) = codec.note_from_json(codec.note_to_json(note)).changes
    assert (change.from_scope, change.to_scope) == (Scope.DIRECT, Scope.PORTABLE)
    assert change == note.changes[0]
    # Words that are not a move between scopes stay words.
    at = START
    assert Change.stored(3, at, E.UNDONE, "ana", "deleted -> active").from_scope is None


_ids = st.text("abc_019", min_size=1, max_size=6)
st.register_type_strategy(NoteId, _ids.map(NoteId))
st.register_type_strategy(ConversationId, _ids.map(ConversationId))
st.register_type_strategy(TurnId, _ids.map(TurnId))
st.register_type_strategy(CandidateId, _ids.map(CandidateId))
_topics = st.none() | st.text(min_size=1, max_size=8)
_BODIES = st.one_of(
    *(
        st.builds(cls, topic=_topics) if cls in (NoteAdded, CandidateSuggested) else st.builds(cls)
        for cls in BODY_CLASSES.values()
    )
)


@settings(max_examples=300, deadline=None)
@given(_BODIES)
def test_issue18_item10_bodies_survive_the_stores_json_seam(body: EventBody) -> None:
    """Round trip: any body, encoded the way the store encodes it and decoded by its type,
    is the body it was."""
    kind = next(k for k, cls in BODY_CLASSES.items() if type(body) is cls)
    text = crypto.canonical_json(body.to_json())
    assert decode_body(kind, json.loads(text)) == body
