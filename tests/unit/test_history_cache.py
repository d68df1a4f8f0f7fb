"""The history tools' in-memory index: equal to searching from scratch, caught up as the log
grows, and never outliving the open store or an erasure (H1, H5)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from engram.engine.history_search import Message, MessageIndex, find_relevant, word_excerpt
from engram.engine.words import terms
from engram.model.conversation import EntryKind, LogEntry
from engram.model.ids import ConversationId, PersonId
from engram.runtime.conversations import (
    append_turn,
    excise_tool_result,
    record_tool_call,
    start_conversation,
)
from engram.runtime.history import HistoryView, dispatch
from engram.store import conversation_log
from engram.store.store import Store

ANA = PersonId("ana")
WORDS = ["ferry", "ferries", "plan", "planned", "tea", "Bergen", "the", "CAFÉ", "cafe", "x"]
texts_strategy = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join), max_size=40
)


def _counted(messages: list[Message], query: str) -> set[str]:
    """H1's counted words, from scratch: query words some message holds, less those in more
    than one in ten messages and more than five, unless that leaves none."""
    held = [terms(m.text) for m in messages]
    found = {t: n for t in terms(query) if (n := sum(t in h for h in held))}
    common = {t for t, n in found.items() if n > 5 and n * 10 > len(messages)}
    return found.keys() - common or set(found)


def _reference(messages: list[Message], query: str, limit: int) -> list[tuple[str, int]]:
    """H1 spelled out: score = counted query words matched; newer first on ties."""
    wanted = _counted(messages, query)
    scored = [(len(wanted & terms(m.text)), m.position, m) for m in messages]
    scored = [s for s in scored if s[0] > 0]
    scored.sort(key=lambda s: (-s[0], -s[1]))
    return [(m.turn, score) for score, _, m in scored[:limit]]


@settings(max_examples=150, deadline=None)
@given(
    texts=texts_strategy,
    removed=st.sets(st.integers(0, 39)),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
    limit=st.integers(1, 25),
)
def test_H1_H5_index_with_removals_ranks_like_the_rule(
    texts: list[str], removed: set[int], query: str, limit: int
) -> None:
    messages = [Message(f"t{i}", i, text) for i, text in enumerate(texts)]
    index = MessageIndex(messages)
    for position in removed:
        index.remove(position)
    kept = [m for m in messages if m.position not in removed]
    result = index.find_relevant(query, limit)
    assert [(m.turn, m.score) for m in result.matches] == _reference(kept, query, limit)
    assert result.truncated == (len(_reference(kept, query, 25 + len(kept))) > limit)
    assert index.messages() == kept
    # the one-shot function is the same search
    assert find_relevant(kept, query, limit) == result
    for match in result.matches:
        text = next(m.text for m in kept if m.turn == match.turn)
        assert match.excerpt == word_excerpt(text, _counted(kept, query))


def _entry(seq: int, kind: EntryKind, ref: str | None, body: dict[str, object]) -> LogEntry:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    return LogEntry(ConversationId("c_x"), seq, at, kind, ref, "ana", None, body, True)


@settings(max_examples=100, deadline=None)
@given(texts=texts_strategy, data=st.data())
def test_H5_a_view_caught_up_in_steps_equals_one_built_at_once(
    texts: list[str], data: st.DataObject
) -> None:
    entries: list[LogEntry] = []
    payloads: dict[int, str | None] = {}
    for i, text in enumerate(texts, start=1):
        if entries and data.draw(st.booleans()):
            target = data.draw(st.sampled_from(entries)).seq
            entries.append(
                _entry(len(entries) + 1, EntryKind.EXCISION, None, {"excised": [target]})
            )
            payloads[len(entries)] = "reason"
        entries.append(_entry(len(entries) + 1, EntryKind.USER, f"t{i}", {}))
        payloads[len(entries)] = text
    stepwise = HistoryView()
    cuts = sorted(data.draw(st.sets(st.integers(0, len(entries)))))
    start = 0
    for cut in [*cuts, len(entries)]:
        chunk = entries[start:cut]
        # texts as a reader decrypts them at the time: excised payloads are already gone
        gone = {s for e in entries[:cut] if e.kind is EntryKind.EXCISION for s in e.body["excised"]}
        stepwise.catch_up(chunk, {e.seq: None if e.seq in gone else payloads[e.seq] for e in chunk})
        start = max(start, cut)
    all_gone = {s for e in entries if e.kind is EntryKind.EXCISION for s in e.body["excised"]}
    at_once = HistoryView()
    at_once.catch_up(entries, {s: None if s in all_gone else t for s, t in payloads.items()})
    assert stepwise.texts == at_once.texts
    assert stepwise.messages() == at_once.messages()
    assert not {m.position for m in stepwise.messages()} & all_gone
    for word in WORDS:
        assert stepwise.index.find_relevant(word, 25) == at_once.index.find_relevant(word, 25)


def _find(store: Store, conversation: ConversationId, query: str) -> list[str]:
    answer = dispatch(store, conversation, "conversation_find", {"query": query, "limit": 25})
    return [m.get("turn_id") or m["call_id"] for m in answer["matches"]]


def test_H1_the_index_catches_up_with_new_turns(store: Store) -> None:
    info = start_conversation(store, [ANA])
    first = append_turn(store, info.id, role="user", author=ANA, text="ferry to Bergen")
    assert _find(store, info.id, "ferry") == [first]
    second = append_turn(store, info.id, role="user", author=ANA, text="the ferries were late")
    assert _find(store, info.id, "ferry") == [second, first]
    turn = dispatch(store, info.id, "conversation_read_turn", {"turn_id": second})
    assert turn["text"] == "the ferries were late"


def test_H5_excision_and_close_drop_the_decrypted_log(store: Store) -> None:
    info = start_conversation(store, [ANA])
    append_turn(store, info.id, role="user", author=ANA, text="look it up")
    call = record_tool_call(store, info.id, name="lookup", arguments="{}", result="SECRETWORD 1")
    assert _find(store, info.id, "secretword") == [call]
    assert store.plaintext_caches  # the decrypted log is held while the store is open
    excise_tool_result(store, info.id, call, actor="staff:x", reason="leak")
    assert not store.plaintext_caches  # an erasure drops every decrypted copy at once
    assert _find(store, info.id, "secretword") == []
    store.close()
    assert not store.plaintext_caches


def test_H4_a_result_excised_twice_keeps_its_first_removal(store: Store) -> None:
    from engram.control.erase import erase_person
    from engram.control.session import PersonSession
    from engram.store import journal

    helper = PersonId("helper")
    with store.write() as txn:
        journal.ensure_person(store, txn, helper)
    info = start_conversation(store, [ANA, helper])
    call = record_tool_call(
        store, info.id, name="lookup", arguments="{}", result="data", author=helper
    )
    excise_tool_result(store, info.id, call, actor="staff:first", reason="wrong")
    erase_person(PersonSession(store, helper, "staff:second"), helper)
    read = dispatch(store, info.id, "conversation_read_tool_result", {"call_id": call})
    assert read["removed"] is True and read["removed_by"] == "staff:first"


def test_H5_a_held_log_is_rebuilt_when_an_older_copy_is_put_back(
    store: Store, store_path: Path
) -> None:
    info = start_conversation(store, [ANA])
    append_turn(store, info.id, role="user", author=ANA, text="alpha")
    store.engine.dispose()  # the WAL folds into the file, which can now be copied
    older = store_path.read_bytes()
    gone = append_turn(store, info.id, role="user", author=ANA, text="secretword")
    assert _find(store, info.id, "secretword") == [gone]
    store.engine.dispose()
    store_path.write_bytes(older)  # someone restores yesterday's copy under the open store
    for extra in store_path.parent.glob(store_path.name + "-*"):
        extra.unlink()
    with store.read() as conn:  # the log is one entry shorter than the held copy
        assert conversation_log.log_head(conn, info.id, 3) == (2, None)
    assert _find(store, info.id, "secretword") == []
    assert _find(store, info.id, "alpha") != []
