"""Search that ranks best where no seed rule binds it, and every language searchable
(issue 18 items 14 and 15); conversation_find keeps H1's count of words (its own tests in
test_history_words.py and test_history.py hold it unchanged)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.engine import bm25
from engram.engine.history_search import Message, MessageIndex
from engram.engine.unscoped import unscoped_audience
from engram.engine.words import terms, tokens, word_spans
from engram.model.agents import AgentConfig
from engram.model.ids import ConversationId, PersonId
from engram.model.scope import Kind, Scope
from engram.runtime import history, memory_tools
from engram.runtime.context import Attribution
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.person_search import PersonIndex
from engram.store.store import Store

ANA = PersonId("ana")
SEARCH = AgentConfig.from_json("helper", {"memory": {"tools": {"search": True}}})
CJK_TEXTS = (
    "我住在北京海淀区，离公司很近。",
    "下个月我们去東京看樱花。",
    "서울에서 친구를 만났어요.",
    "The printer jammed again.",
)


def _chat(store: Store, *texts: str) -> tuple[ConversationId, list[str]]:
    info = start_conversation(store, [ANA], agent="helper")
    return info.id, [append_turn(store, info.id, role="user", author=ANA, text=t) for t in texts]


def _found(store: Store, conversation: ConversationId, query: str) -> list[str]:
    answer: dict[str, Any] = history.dispatch(
        store, conversation, "conversation_find", {"query": query, "limit": 25}
    )
    return [m["turn_id"] for m in answer["matches"]]


def _person_search(store: Store, query: str) -> list[str]:
    hits, _ = PersonIndex.build(store, unscoped_audience(ANA)).search(query)
    return [h.turn for h in hits]


# ---- item 15: Han, Kana and Hangul --------------------------------------------------------


def test_issue18_item15_a_cjk_run_is_cut_into_bigrams_and_a_lone_character_kept() -> None:
    assert terms("海淀区") == {"海淀", "淀区"}
    assert terms("北京") <= terms("我住在北京海淀区")
    assert terms("東京") <= terms("東京タワー")
    assert terms("서울") <= terms("서울에서")
    assert tokens("東 and Tokyo") == ["東", "tokyo"]  # one character alone is a word
    assert tokens("abc北京def") == ["abc", "北京", "def"]  # other scripts stay whole
    text = "我住在北京海淀区"
    assert [text[a:b] for a, b in word_spans(text, terms("海淀区"))] == ["海淀", "淀区"]


def test_issue18_item15_H1_conversation_find_finds_cjk_words_in_relevance_mode(
    store: Store,
) -> None:
    conversation, turns = _chat(store, *CJK_TEXTS)
    assert _found(store, conversation, "北京") == [turns[0]]
    assert _found(store, conversation, "海淀区") == [turns[0]]
    assert _found(store, conversation, "東京") == [turns[1]]
    assert _found(store, conversation, "서울") == [turns[2]]
    answer = history.dispatch(store, conversation, "conversation_find", {"query": "海淀区"})
    assert "海淀区" in answer["matches"][0]["excerpt"]


def test_issue18_item15_memory_search_finds_cjk_notes(store: Store) -> None:
    conversation, _ = _chat(store, "你好")
    session = PersonSession(store, ANA, ANA)
    beijing = add_note(session, "住在北京海淀区。", Kind.FACT, Scope.PORTABLE)
    tokyo = add_note(session, "喜欢東京的秋天。", Kind.PREFERENCE, Scope.PORTABLE)
    where = Attribution(ANA, conversation)

    def search(query: str) -> list[str]:
        answer = memory_tools.dispatch(
            store, where, SEARCH, {"memory_search"}, "memory_search", {"query": query}
        )
        return [i["item_id"] for i in answer["items"]]

    assert search("北京") == [beijing]
    assert search("海淀区") == [beijing]
    assert search("東京") == [tokyo]


def test_issue18_item15_the_inspectors_person_wide_search_finds_cjk_words(store: Store) -> None:
    _, turns = _chat(store, *CJK_TEXTS)
    assert _person_search(store, "北京") == [turns[0]]
    assert _person_search(store, "海淀区") == [turns[0]]
    assert _person_search(store, "東京") == [turns[1]]


# ---- item 14: BM25 where no seed rule binds ------------------------------------------------


def _index(*texts: str) -> MessageIndex:
    return MessageIndex(Message(f"t{i}", i, text) for i, text in enumerate(texts))


def _best(index: MessageIndex, query: str) -> list[str]:
    return [m.turn for m in index.find_best(query, 25).matches]


def test_issue18_item14_a_rare_term_outranks_a_common_one() -> None:
    # "coffee" is in three of ten messages, "bergen" in one; both match one query word, so
    # H1 would tie them and put the newest coffee first
    index = _index(
        "We flew to Bergen.",
        *(f"Filler line {i}." for i in range(6)),
        "Coffee at nine.",
        "Coffee at ten.",
        "Coffee at noon.",
    )
    assert _best(index, "bergen coffee") == ["t0", "t9", "t8", "t7"]
    assert bm25.idf(1, 10) > bm25.idf(3, 10) > 0


def test_issue18_item14_a_shorter_message_with_the_same_words_ranks_first() -> None:
    index = _index(
        "Bergen.",
        "Bergen, after a long ferry ride past the islands and the old fishing harbours.",
    )
    assert _best(index, "bergen") == ["t0", "t1"]  # H1 ties them, newest (t1) first
    assert bm25.length_norm(2, 8.0) > bm25.length_norm(16, 8.0)


def test_issue18_item14_ties_go_to_the_newer_message() -> None:
    assert _best(_index("Bergen rain.", "Bergen sun."), "bergen") == ["t1", "t0"]


def test_issue18_item14_the_inspectors_person_wide_search_ranks_by_bm25(store: Store) -> None:
    _, turns = _chat(
        store,
        "We flew to Bergen.",
        *(f"Filler line {i}." for i in range(6)),
        "Coffee at nine.",
        "Coffee at ten.",
        "Coffee at noon.",
    )
    assert _person_search(store, "bergen coffee")[0] == turns[0]


def test_issue18_item14_memory_search_ranks_a_rare_word_first(store: Store) -> None:
    conversation, _ = _chat(store, "hello")
    session = PersonSession(store, ANA, ANA)
    # the oldest note: the ranking alone (and the old count of words) puts it last
    bergen = add_note(session, "Was born in Bergen.", Kind.FACT, Scope.PORTABLE)
    for n in range(4):
        add_note(session, f"Drinks coffee at {n} pm.", Kind.PREFERENCE, Scope.PORTABLE)
    answer = memory_tools.dispatch(
        store,
        Attribution(ANA, conversation),
        SEARCH,
        {"memory_search"},
        "memory_search",
        {"query": "coffee bergen", "limit": 25},
    )
    items = [i["item_id"] for i in answer["items"]]
    assert items[0] == bergen and len(items) == 5


_VOCABULARY = ["bergen", "coffee", "ferry", "rain", "tea", "lyon", "cello", "harbour"]


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(
        st.lists(st.sampled_from(_VOCABULARY), min_size=1, max_size=6).map(" ".join),
        min_size=1,
        max_size=20,
    ),
    query=st.lists(st.sampled_from(_VOCABULARY), min_size=1, max_size=3).map(" ".join),
)
def test_issue18_item14_the_ranking_is_a_permutation_of_the_matches(
    texts: list[str], query: str
) -> None:
    index = _index(*texts)
    wanted = terms(query)
    matching = {f"t{i}" for i, text in enumerate(texts) if terms(text) & wanted}
    ranked = _best(index, query)
    assert len(ranked) == len(set(ranked)) and set(ranked) == matching
    as_sets = bm25.rank_sets(wanted, [frozenset(terms(t)) for t in texts])
    assert sorted(i for i, _ in as_sets) == sorted(int(t[1:]) for t in matching)
    scores = [s for _, s in as_sets]
    assert scores == sorted(scores, reverse=True)


def test_issue18_item15_each_language_drops_its_own_stop_words() -> None:
    assert terms("le chat et la souris", "french") == terms("chat souris", "french")
    assert terms("der Hund und die Katze", "german") == terms("Hund Katze", "german")
    assert terms("el perro y la casa", "spanish") == terms("perro casa", "spanish")
    assert tokens("Je suis dans le TRAIN", "french") == ["train"]
    # English keeps H1's own list, so conversation_find ranks English as it always did
    assert tokens("what did the cat do") == ["cat"]
    french = MessageIndex(
        [Message("t0", 0, "Le chat dort."), Message("t1", 1, "Il a pris le train.")], "french"
    )
    assert [m.turn for m in french.find_relevant("le train", 25).matches] == ["t1"]
