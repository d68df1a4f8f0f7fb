"""The conversation-history tools, H1-H6, through the dispatcher the agent uses."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from engram.engine.history_search import NO_MATCH_HINT
from engram.engine.unscoped import unscoped_audience
from engram.engine.words import stem, terms
from engram.model.errors import InvalidInput
from engram.model.ids import ConversationId, PersonId
from engram.runtime.conversations import (
    append_turn,
    excise_tool_result,
    record_tool_call,
    start_conversation,
)
from engram.runtime.history import REMOVED, TOOL_DEFINITIONS, TOOL_SPECS, dispatch
from engram.store.store import Store
from engram.store.verify import verify

ANA = PersonId("ana")
FIND_OUTPUT = next(s.output for s in TOOL_SPECS if s.name == "conversation_find")


def _chat(store: Store, *lines: tuple[str, str]) -> tuple[ConversationId, list[str]]:
    info = start_conversation(store, [ANA])
    turns = [
        append_turn(
            store, info.id, role=role, author=ANA if role == "user" else "helper", text=text
        )
        for role, text in lines
    ]
    return info.id, turns


def _call(store: Store, conversation: ConversationId, name: str, **args: Any) -> dict[str, Any]:
    return dispatch(store, conversation, name, args)


def test_H1_relevance_counts_matching_words_newer_first_on_ties(store: Store) -> None:
    conversation, turns = _chat(
        store,
        ("user", "We planned the deploy for Friday behind a feature flag."),
        ("assistant", "Noted: deploy on Friday."),
        ("user", "The deploy plan changed: Monday, still behind the flag."),
        ("user", "Unrelated: lunch was good."),
    )
    answer = _call(store, conversation, "conversation_find", query="deploy plan flag")
    ids = [m["turn_id"] for m in answer["matches"]]
    # three words each for turns 2 and 0 (plan ~ planned): the newer wins the tie
    assert ids[:2] == [turns[2], turns[0]]
    assert ids[2] == turns[1] and turns[3] not in ids
    assert answer["truncated"] is False
    assert "deploy" in answer["matches"][0]["excerpt"].lower()


def test_H1_five_by_default_twenty_five_at_most_with_a_hint_when_more(store: Store) -> None:
    conversation, _ = _chat(store, *[("user", f"note about tea number {i}") for i in range(30)])
    default = _call(store, conversation, "conversation_find", query="tea")
    assert len(default["matches"]) == 5 and default["truncated"] is True and default["hint"]
    most = _call(store, conversation, "conversation_find", query="tea", limit=100)
    assert len(most["matches"]) == 25


def test_H1_normalises_case_accents_punctuation_and_word_forms() -> None:
    assert terms("CAFÉ, cafés!") == terms("cafe") | terms("cafes")
    assert stem("planned") == stem("plans") == stem("planning") == "plan"
    assert "the" not in terms("the plan")


def test_H2_pattern_mode_literal_or_regex_newest_first(store: Store) -> None:
    conversation, turns = _chat(
        store,
        ("user", "Ticket INC-1234 is open."),
        ("user", "Also INC-99 and INC-7."),
        ("user", "nothing here"),
    )
    answer = _call(store, conversation, "conversation_find", query=r"INC-\d+", mode="pattern")
    assert [m["turn_id"] for m in answer["matches"]] == [turns[1], turns[0]]
    nothing = _call(store, conversation, "conversation_find", query="zebra", mode="pattern")
    assert nothing == {"matches": [], "truncated": False, "hint": NO_MATCH_HINT}
    # H2's hint in the seed's own words, not the constant (issue 18 item 16)
    assert nothing["hint"] == (
        "nothing in this conversation matched; try fewer or different words, or switch mode "
        "to see what is there another way"
    )


def test_issue9_item1_H2_backtracking_classics_answer_at_once(store: Store) -> None:
    """Under RE2 the classic catastrophic patterns are linear: an answer, not a timeout."""
    conversation, _ = _chat(store, ("user", "a" * 5_000 + "b"))
    start = time.monotonic()
    answer = _call(store, conversation, "conversation_find", query="(a+)+$", mode="pattern")
    assert time.monotonic() - start < 0.5
    assert answer == {"matches": [], "truncated": False, "hint": NO_MATCH_HINT}


def test_issue9_item1_H2_pattern_mode_also_matches_literal_text(store: Store) -> None:
    conversation, turns = _chat(
        store,
        ("user", "The fee is $5.00 (approx, with tax)."),
        ("user", "Five dollars, 500 cents."),
    )
    for query in ("$5.00", "(approx", "[x", "a{3,2}"):
        answer = _call(store, conversation, "conversation_find", query=query, mode="pattern")
        assert "error" not in answer, query
        expected = [turns[0]] if query in ("$5.00", "(approx") else []
        assert [m["turn_id"] for m in answer["matches"]] == expected, query
    assert (
        "$5.00"
        in _call(store, conversation, "conversation_find", query="$5.00", mode="pattern")[
            "matches"
        ][0]["excerpt"]
    )
    # a valid regular expression still matches as one; both are case-sensitive unless (?i)
    regex = _call(store, conversation, "conversation_find", query=r"\d{3} cents", mode="pattern")
    assert [m["turn_id"] for m in regex["matches"]] == [turns[1]]
    upper = _call(store, conversation, "conversation_find", query="FIVE", mode="pattern")
    assert upper["matches"] == []
    folded = _call(store, conversation, "conversation_find", query="(?i)FIVE", mode="pattern")
    assert [m["turn_id"] for m in folded["matches"]] == [turns[1]]


def test_H3_read_turn_cuts_long_middles_and_rejects_unknown_ids(store: Store) -> None:
    long_text = "START " + "x" * 20_000 + " END"
    conversation, turns = _chat(store, ("user", "short one"), ("user", long_text))
    short = _call(store, conversation, "conversation_read_turn", turn_id=turns[0])
    assert short["text"] == "short one" and short["truncated"] is False
    cut = _call(store, conversation, "conversation_read_turn", turn_id=turns[1])
    assert cut["truncated"] is True and cut["text"].startswith("START")
    assert cut["text"].endswith("END") and "characters cut" in cut["text"]
    assert (
        "There is no turn"
        in _call(store, conversation, "conversation_read_turn", turn_id="t_nope")["error"]
    )


def test_H4_H5_excised_results_read_as_a_notice_and_are_never_found(
    store: Store, store_path: Path
) -> None:
    conversation, _ = _chat(store, ("user", "look up my account"))
    call = record_tool_call(
        store,
        conversation,
        name="crm_lookup",
        arguments='{"id": 7}',
        result="account 7: SECRET-ACCOUNT-TOKEN balance 120",
    )
    found = _call(
        store, conversation, "conversation_find", query="SECRET-ACCOUNT-TOKEN", mode="pattern"
    )
    assert found["matches"][0]["call_id"] == call
    excise_tool_result(store, conversation, call, actor="staff:dana", reason="leaked a token")
    read = _call(store, conversation, "conversation_read_tool_result", call_id=call)
    assert read["removed"] is True and read["notice"] == REMOVED
    assert "SECRET" not in str(read) and read["removed_by"] == "staff:dana"
    for mode, query in (("pattern", "SECRET-ACCOUNT-TOKEN"), ("relevance", "secret token")):
        assert (
            _call(store, conversation, "conversation_find", query=query, mode=mode)["matches"] == []
        )
    listed = _call(store, conversation, "conversation_list_tool_calls")
    assert listed == {"calls": [{"call_id": call, "name": "crm_lookup", "removed": True}]}
    report = verify(store)
    assert report.ok, report.problems  # the chain still verifies
    raw = b"".join(
        p.read_bytes()
        for p in store_path.parent.glob(store_path.name + "*")
        if not p.name.endswith((".checkpoint", ".lock"))
    )
    assert b"SECRET-ACCOUNT-TOKEN" not in raw


def test_H6_no_tool_takes_a_conversation_and_scope_fields_are_ignored(store: Store) -> None:
    mine, _ = _chat(store, ("user", "my own words about gardens"))
    other, _ = _chat(store, ("user", "someone else's words about gardens"))
    for tool in TOOL_DEFINITIONS:
        properties = tool["function"]["parameters"]["properties"]
        assert not {"conversation", "conversation_id", "person", "scope"} & set(properties)
    answer = dispatch(
        store,
        mine,
        "conversation_find",
        {"query": "gardens", "conversation": other, "scope": "portable", "person": "someone"},
    )
    texts = [m["excerpt"] for m in answer["matches"]]
    assert texts == ["my own words about gardens"]


def test_recent_turns_and_unknown_tools(store: Store) -> None:
    conversation, turns = _chat(store, *[("user", f"turn {i}") for i in range(8)])
    recent = _call(store, conversation, "conversation_recent_turns", limit=3)
    assert [t["turn_id"] for t in recent["turns"]] == turns[-3:]
    assert "no history tool" in _call(store, conversation, "conversation_delete_all")["error"]
    assert "JSON object" in dispatch(store, conversation, "conversation_find", "not json")["error"]
    assert "JSON object" in dispatch(store, conversation, "conversation_find", None)["error"]  # type: ignore[arg-type]
    lost = dispatch(store, ConversationId("c_nope"), "conversation_recent_turns", {})
    assert "There is no conversation" in lost["error"]


def test_person_wide_search_spans_conversations_and_skips_excised(store: Store) -> None:
    from engram.runtime.person_search import PersonIndex

    first, turns_a = _chat(store, ("user", "Booked the ferry to Bergen"))
    second, turns_b = _chat(store, ("user", "Ferry tickets cost too much"))
    call = record_tool_call(
        store, second, name="prices", arguments="{}", result="ferry SECRETPRICE 999"
    )
    excise_tool_result(store, second, call, actor="staff:x", reason="wrong data")
    other = start_conversation(store, [PersonId("zed")])
    append_turn(store, other.id, role="user", author=PersonId("zed"), text="ferry for zed")
    index = PersonIndex.build(store, unscoped_audience(ANA))
    hits, more = index.search("ferries")
    # BM25 (issue 18 item 14): the same one word matched, the shorter message first
    assert [(h.conversation, h.turn) for h in hits] == [(first, turns_a[0]), (second, turns_b[0])]
    assert more is False
    assert index.search("SECRETPRICE", "pattern")[0] == []
    index.add(first, "t_long", "a" * 5000 + "b")
    assert index.search("(a+)+$", "pattern") == ([], False)
    with pytest.raises(InvalidInput, match="backreferences or lookaround"):
        index.search(r"(a)\1", "pattern")


def test_H1_H3_every_match_says_turn_or_tool_result_and_its_id_reads(store: Store) -> None:
    """Issue 11 item 2: a tool result found by conversation_find used to come back as a
    `turn_id` that conversation_read_turn refused. Each match now names its kind and the id
    its read tool accepts, in both modes and in person-wide search."""
    from engram.runtime.person_search import PersonIndex

    conversation, turns = _chat(store, ("user", "What is the weather in Oslo?"))
    call = record_tool_call(
        store, conversation, name="weather", arguments="{}", result="Oslo: 3 degrees and sleet"
    )
    for mode, query in (("relevance", "oslo"), ("pattern", "Oslo")):
        matches = _call(store, conversation, "conversation_find", query=query, mode=mode)["matches"]
        assert [m["kind"] for m in matches] == ["tool_result", "turn"]  # newest first
        for match in matches:  # what the tool promises in its output schema
            jsonschema.validate(match, FIND_OUTPUT["properties"]["matches"]["items"])
        result, turn = matches
        assert result["call_id"] == call and "turn_id" not in result
        assert turn["turn_id"] == turns[0] and "call_id" not in turn
        for match in matches:  # the id each match carries is one its read tool accepts
            if match["kind"] == "turn":
                read = _call(
                    store, conversation, "conversation_read_turn", turn_id=match["turn_id"]
                )
                assert "Oslo" in read["text"]
            else:
                read = _call(
                    store, conversation, "conversation_read_tool_result", call_id=match["call_id"]
                )
                assert "sleet" in read["result"]
    hits, _ = PersonIndex.build(store, unscoped_audience(ANA)).search("oslo")
    # BM25 (issue 18 item 14): the same one word matched, the shorter message first
    assert [h.to_json() for h in hits] == [
        {
            "conversation": conversation,
            "kind": "turn",
            "turn_id": turns[0],
            "excerpt": "What is the weather in Oslo?",
        },
        {
            "conversation": conversation,
            "kind": "tool_result",
            "call_id": call,
            "excerpt": "Oslo: 3 degrees and sleet",
        },
    ]


def test_word_forms_meet() -> None:
    assert stem("ferries") == stem("ferry")
    assert stem("carried") == stem("carry")


def test_H2_the_time_budget_covers_a_whole_search_not_each_message() -> None:
    from engram.engine.history_search import Message
    from engram.runtime import pattern_search

    # many quick messages spend the budget together: the search is refused at its end
    text = "tea " * 2_000
    messages = [Message(f"t{i}", i, text) for i in range(20_000)]  # about 0.3 s to search
    start = time.monotonic()
    with pytest.raises(InvalidInput, match="too long"):
        pattern_search.find(messages, "c[o]ffee", None, budget_s=0.05)
    assert time.monotonic() - start < 0.05 + 0.05
    assert pattern_search.settle(5)


def test_H1_R1_a_limit_of_zero_is_refused_alike_by_find_and_recall(store: Store, cli: Any) -> None:
    """Issue 11 item 6: `limit: 0` used to return one match from find and be an error in
    recall. Both now refuse it with the same sentence; above 25 both still cut to 25."""
    from engram.mcp.tools import bind, call

    conversation, _ = _chat(store, ("user", "tea in Kyoto"))
    bound = bind(store, ANA, conversation, None, None)
    said = set()
    for limit in (0, -3):
        found = _call(store, conversation, "conversation_find", query="tea", limit=limit)
        recent = _call(store, conversation, "conversation_recent_turns", limit=limit)
        recalled = call(bound, "memory_recall", {"limit": limit})
        said |= {found["error"], recent["error"], recalled["error"]}
    assert said == {"'limit' must be at least 1; leave it out for the default."}
    most = _call(store, conversation, "conversation_find", query="tea", limit=100)
    assert len(most["matches"]) == 1
    store.close()
    for command in (
        ["conversation", "find", conversation, "tea", "--limit", "0"],
        ["recall", "--person", "ana", "--conversation", conversation, "--limit", "0"],
    ):
        refused = cli(*command, "--json")
        assert refused.code == 1
        assert refused.json() == {
            "error": "'limit' must be at least 1; leave it out for the default."
        }
