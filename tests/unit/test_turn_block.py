"""Issue 8 item 19: "what did the agent see?" — the block a turn got, from the usage ledger.

A real turn records its block (placed notes with rank, dropped ones with reasons, the
audience, the budget) as one replayable `item_used` event; control.turn_block rebuilds the
exact block for an assistant turn from it (A2, A5, A8, S2, S3, C1, C4).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.control.conversations import delete_conversation
from engram.control.demo import MAYA, build_demo
from engram.control.session import PersonSession
from engram.control.turn_block import turn_sight
from engram.engine.assembly import MAX_NOTES, PRIVATE_WITHHELD
from engram.model.conversation import EntryKind
from engram.model.errors import NotFound
from engram.model.ids import ConversationId, PersonId, TurnId
from engram.model.scope import AudienceKind, Kind, Scope
from engram.runtime.context import Attribution, assemble_turn, recall_turn
from engram.runtime.conversations import (
    append_turn,
    conversations_of,
    start_conversation,
    turns,
)
from engram.runtime.note_writes import NoteDraft, add_digest_line, learn_note
from engram.store import crypto
from engram.store.store import Store
from engram.store.verify import verify
from tests.conftest import PASSPHRASE

ANA, BEN = PersonId("ana"), PersonId("ben")


def _teach(store: Store, texts: list[tuple[str, Scope]]) -> ConversationId:
    info = start_conversation(store, [ANA])
    for text, scope in texts:
        turn = append_turn(store, info.id, role="user", author=ANA, text=text)
        learn_note(store, ANA, NoteDraft(text, Kind.FACT, scope), info.id, turn)
    return info.id


def _answered(store: Store, people: list[PersonId], ask: str) -> tuple[Attribution, TurnId, str]:
    """A turn answered with memory: the user asks, the block is assembled, the agent replies."""
    info = start_conversation(store, people)
    asked = append_turn(store, info.id, role="user", author=ANA, text=ask)
    where = Attribution(ANA, info.id, asked)
    block = assemble_turn(store, where, record_usage=True).block
    reply = append_turn(store, info.id, role="assistant", author="helper", text="Sure.")
    return where, reply, block


def test_issue8_item19_an_assistant_turn_shows_exactly_the_block_it_got(store: Store) -> None:
    learned = _teach(store, [("Lives in Bergen.", Scope.DIRECT), ("Plays chess.", Scope.PORTABLE)])
    add_digest_line(store, ANA, learned, "Talked about moving to Bergen.")
    where, reply, block = _answered(store, [ANA], "Any plans for tonight?")
    sight = turn_sight(PersonSession.open(store, ANA), where.conversation, reply)
    assert sight.block is not None and sight.block.text == block
    assert sight.block.for_turn == where.turn and sight.block.audience is AudienceKind.SUBJECT_ALONE
    assert [(p.text, p.rank, p.section) for p in sight.block.placed] == [
        ("Plays chess.", 1, "notes"),  # ranking: equal confidence, newest source first
        ("Lives in Bergen.", 2, "notes"),
    ]
    assert sight.block.digest == ["Talked about moving to Bergen."]
    assert sight.block.budget == 1200 and sight.block.used == len(block)
    assert sight.audience_sentence.startswith("Only ana could read this conversation")
    assert sight.block.dropped == [] and sight.tools == []
    # The user turn the block was assembled for shows the same block.
    assert turn_sight(PersonSession.open(store, ANA), where.conversation, where.turn).block
    assert verify(store).ok  # the ledger event replays like any other


def test_issue8_item19_S2_a_shared_turn_records_its_audience_and_what_it_withheld(
    store: Store,
) -> None:
    _teach(store, [("Lives in Bergen.", Scope.DIRECT), ("Plays chess.", Scope.PORTABLE)])
    where, reply, block = _answered(store, [ANA, BEN], "Ben and I want a game tonight.")
    sight = turn_sight(PersonSession.open(store, ANA), where.conversation, reply)
    assert sight.block is not None and sight.block.audience is AudienceKind.SHARED
    assert [p.text for p in sight.block.placed] == ["Plays chess."]
    assert sight.block.text == block and PRIVATE_WITHHELD in block
    assert "Others could read this conversation (ben)" in sight.audience_sentence


def test_issue8_item19_A5_dropped_notes_are_listed_with_their_reason(store: Store) -> None:
    facts = [(f"Fact number {i} about Ana.", Scope.DIRECT) for i in range(MAX_NOTES + 2)]
    _teach(store, facts)
    where, reply, block = _answered(store, [ANA], "Hello?")
    sight = turn_sight(PersonSession.open(store, ANA), where.conversation, reply)
    assert sight.block is not None and sight.block.text == block
    assert len(sight.block.placed) == MAX_NOTES
    reasons = {d.reason for d in sight.block.dropped}
    assert reasons == {f"limit of {MAX_NOTES} notes"}
    assert all(d.text and d.text.startswith("Fact number") for d in sight.block.dropped)
    placed = {p.note for p in sight.block.placed}
    assert not placed & {d.note for d in sight.block.dropped}


def test_issue8_item19_C4_a_block_whose_text_was_erased_is_not_shown(store: Store) -> None:
    learned = _teach(store, [("Lives in Bergen.", Scope.DIRECT)])
    where, reply, _ = _answered(store, [ANA], "Hi")
    delete_conversation(PersonSession.open(store, ANA), learned)
    sight = turn_sight(PersonSession.open(store, ANA), where.conversation, reply)
    assert sight.block is not None and sight.block.text is None
    assert "erased with its conversation" in sight.block.why_no_text
    [placed] = sight.block.placed
    assert placed.text is None and placed.status == "deleted"


def test_issue8_item19_turns_without_a_record_and_other_peoples_conversations(
    store: Store,
) -> None:
    info = start_conversation(store, [ANA])
    asked = append_turn(store, info.id, role="user", author=ANA, text="Hi")
    reply = append_turn(store, info.id, role="assistant", author="helper", text="Hello")
    recall_turn(store, Attribution(ANA, info.id, asked), record_usage=True)
    sight = turn_sight(PersonSession.open(store, ANA), info.id, reply)
    assert sight.block is None and sight.tools == []  # recall found nothing to record
    start_conversation(store, [BEN])
    with pytest.raises(NotFound):  # C1: Ben's session cannot read Ana's conversation
        turn_sight(PersonSession.open(store, BEN), info.id, reply)
    with pytest.raises(NotFound, match="no turn"):
        turn_sight(PersonSession.open(store, ANA), info.id, TurnId("t_missing"))


def test_issue8_item19_the_demo_records_real_blocks(tmp_path: Path) -> None:
    location = str(tmp_path / "demo.engram")
    build_demo(location, passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS)
    store = Store.open(location, passphrase=PASSPHRASE)
    try:
        maya = PersonSession.open(store, MAYA)
        seen = []
        for conversation in [c.id for c in conversations_of(store, MAYA)]:
            for entry, _ in turns(store, conversation):
                if entry.kind is EntryKind.ASSISTANT and entry.ref:
                    sight = turn_sight(maya, conversation, TurnId(entry.ref))
                    if sight.block is not None:
                        seen.append(sight)
        audiences = {s.block.audience for s in seen if s.block}
        assert audiences == {AudienceKind.SUBJECT_ALONE, AudienceKind.SHARED}
        assert all(s.block and s.block.text for s in seen)
        assert any(t.via == "recall" and t.notes for s in seen for t in s.tools)
    finally:
        store.close()
