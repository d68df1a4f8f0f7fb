"""H1's words (issue 11, "history search that beats BM25"): Snowball stems, accents folded,
common query words left out of a search, and stems in the language the profile names."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.engine import words
from engram.engine.history_search import Message, MessageIndex
from engram.engine.unscoped import unscoped_audience
from engram.engine.words import language_named, stem, terms, tokens
from engram.model.ids import ConversationId, PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.history import dispatch
from engram.runtime.maintenance import maintain_person
from engram.runtime.person_search import PersonIndex
from engram.store import journal
from engram.store.store import Store

ANA = PersonId("ana")
BEN = PersonId("ben")


def _chat(store: Store, people: list[PersonId], *texts: str) -> tuple[ConversationId, list[str]]:
    info = start_conversation(store, people)
    turns = [append_turn(store, info.id, role="user", author=people[0], text=t) for t in texts]
    return info.id, turns


def _find(store: Store, conversation: ConversationId, query: str) -> list[str]:
    answer: dict[str, Any] = dispatch(
        store, conversation, "conversation_find", {"query": query, "limit": 25}
    )
    return [m["turn_id"] for m in answer["matches"]]


def _language_note(store: Store, person: PersonId, text: str, scope: Scope) -> None:
    with store.write() as txn:
        journal.ensure_person(store, txn, person)
    add_note(PersonSession(store, person, person), text, Kind.STYLE, scope, topic="language")
    assert maintain_person(store, person)["profile_rebuilt"] is True


def test_issue11_H1_word_forms_meet_through_the_snowball_stemmer(store: Store) -> None:
    conversation, turns = _chat(
        store,
        [ANA],
        "We connected the two offices last spring.",
        "Happiness is a warm cup of tea.",
        "Unrelated: the printer jammed.",
    )
    assert _find(store, conversation, "connection") == [turns[0]]
    assert _find(store, conversation, "happy") == [turns[1]]
    assert terms("running runs") == terms("run")


def test_issue11_H1_accents_fold_before_stemming_and_only_on_latin_and_greek_letters() -> None:
    assert terms("Sent my résumés to Zürich") == terms("resume zurich sent")
    assert terms("καλημέρα") == terms("ΚΑΛΗΜΕΡΑ")
    # a mark that is part of a letter stays: Cyrillic й is not и, a Devanagari word is one
    assert tokens("новый") == ["новый"]
    assert tokens("हिन्दी") == ["हिन्दी"]


def test_issue11_H1_a_common_word_does_not_count_unless_every_matching_word_is_common(
    store: Store,
) -> None:
    walks = [f"Trip day {i}: we walked along the coast." for i in range(8)]
    conversation, turns = _chat(
        store, [ANA], *walks, "The trip to Bergen was rainy.", "Lunch was fine."
    )
    # "trip" is in 9 of 10 messages: a stop word for this search, as "Bergen" matches
    assert _find(store, conversation, "trip to Bergen") == [turns[8]]
    # every matching word is common: they all count (a word matching nothing is no help)
    expected = list(reversed(turns[:9]))
    assert _find(store, conversation, "trip") == expected
    assert _find(store, conversation, "trip zebra") == expected


def test_issue11_H1_common_means_over_a_tenth_of_the_messages_and_over_five() -> None:
    def matches(holders: int, others: int) -> int:
        texts = ["tea moon"] + ["tea"] * (holders - 1) + ["coffee"] * others
        index = MessageIndex(Message(f"t{i}", i, text) for i, text in enumerate(texts))
        return len(index.find_relevant("tea moon", 25).matches)

    assert matches(5, 0) == 5  # in every message, but only five: counts
    assert matches(6, 0) == 1  # six of six: common
    assert matches(6, 54) == 6  # six of sixty: not over a tenth, counts
    assert matches(7, 53) == 1  # seven of sixty: common


def test_issue11_H1_document_frequencies_follow_additions_and_removals() -> None:
    index = MessageIndex(Message(f"t{i}", i, "tea") for i in range(6))
    index.add(Message("moon", 6, "tea moon"))
    assert len(index.find_relevant("tea moon", 25).matches) == 1  # tea: 7 of 7, common
    for position in range(4):
        index.remove(position)
    assert len(index.find_relevant("tea moon", 25).matches) == 3  # tea: 3 of 3, counts


def test_issue11_H1_stems_in_the_language_the_profile_names(store: Store) -> None:
    conversation, turns = _chat(store, [ANA], "Elle chantait tous les soirs.", "Il pleut.")
    assert _find(store, conversation, "chanter") == []  # English stems: chantait, chanter
    _language_note(store, ANA, "Wants replies in French.", Scope.PORTABLE)
    # the view already built notices the profile and indexes again, in French
    assert _find(store, conversation, "chanter") == [turns[0]]
    hits, _ = PersonIndex.build(store, unscoped_audience(ANA)).search("chanter")
    assert [h.turn for h in hits] == [turns[0]]


def test_issue11_H1_S2_a_private_language_note_does_not_steer_a_shared_conversation(
    store: Store,
) -> None:
    _language_note(store, ANA, "Русский", Scope.DIRECT)
    alone, alone_turns = _chat(store, [ANA], "Это новый дом.")
    shared, _ = _chat(store, [ANA, BEN], "Это новый дом.")
    assert _find(store, alone, "новые") == alone_turns
    assert _find(store, shared, "новые") == []


def test_issue11_H1_language_names_map_to_snowball_stemmers() -> None:
    assert language_named("Wants replies in French.") == "french"
    assert language_named("Español, por favor") == "spanish"
    assert language_named("Deutsch") == "german"
    assert language_named("русский") == "russian"
    assert language_named("Klingon") is None
    assert language_named(None) is None


def test_issue11_H1_terms_are_the_stems_of_the_folded_tokens_on_every_path() -> None:
    """An ASCII text is cut without the full fold and stems come from a cache of tokens:
    the terms are still the stems of `tokens` (folded, stop words out), as H1 defines them."""
    texts = [
        "The Running_Dogs ran 3 laps; RUNNING dogs, again!",
        "Ünïcode Café: the résumés of Zürich",
        "x9 X9 it's don't e-mail 2024-05-01",
        "Это новый дом. हिन्दी",
        "",
    ]
    for text in texts:
        assert terms(text) == {stem(word) for word in tokens(text)}, text
        in_french = {stem(word, "french") for word in tokens(text, "french")}  # its stop words
        assert terms(text, "french") == in_french, text


def test_issue11_H1_a_stream_of_new_words_leaves_terms_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The token cache starts new generations as it fills (tiny here); words met before
    and words never met still give their own stems."""
    monkeypatch.setattr(words, "CACHED_STEMS", 4)
    for i in range(50):
        text = f"Connected offices n{i} Z{i}x and the connection"
        assert terms(text) == {stem(word) for word in tokens(text)}


def test_issue11_H1_postings_are_not_walked_by_the_garbage_collector() -> None:
    """Building a person's index adds hundreds of thousands of postings: they are kept in
    objects the garbage collector does not track, so its full passes stay cheap."""
    index = MessageIndex(Message(f"t{i}", i, f"tea n{i}") for i in range(3))
    postings = index._postings  # what is stored is the point here
    assert postings and not any(gc.is_tracked(held) for held in postings.values())
    assert list(index.holders(terms("tea").pop())) == [0, 1, 2]
