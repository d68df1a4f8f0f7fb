"""Issue 18 item 1 (P5): sensitive facts are never applied without review.

The detector is data (engram/data/sensitive/categories.json) in four languages, measured on
a labelled set under tests/data; a candidate is sensitive when the detector *or* the
extractor says so; automatic mode applies a sensitive one only when the agent names its
category; the category and the extractor's reason travel with the candidate."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.control import candidates
from engram.control.notes import list_notes
from engram.control.session import PersonSession
from engram.engine.rule_extractor import RuleExtractor
from engram.model.agents import AgentConfig, auto_apply_sentence
from engram.model.errors import InvalidInput
from engram.model.ids import PersonId
from engram.model.sensitivity import SensitiveCategory
from engram.runtime.agents import set_agent
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.extraction import learn_person
from engram.runtime.openai_extractor import OpenAIExtractor
from engram.runtime.sensitive_lexicon import _places, sensitive_category
from engram.store.store import Store
from tests.unit.test_openai_extractor import FakeServer

ANA = PersonId("ana")
DATA = Path(__file__).parents[1] / "data"
RECALL_FLOOR = 0.95
FALSE_ALARM_CEILING = 0.10


def _statements(name: str) -> list[dict[str, Any]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _figures(rows: list[dict[str, Any]]) -> tuple[float, float]:
    sensitive = [r for r in rows if r["sensitive"]]
    other = [r for r in rows if not r["sensitive"]]
    caught = sum(1 for r in sensitive if sensitive_category(r["text"]) is not None)
    alarms = sum(1 for r in other if sensitive_category(r["text"]) is not None)
    return caught / len(sensitive), alarms / len(other)


def test_issue18_item1_P5_the_labelled_set_is_large_balanced_and_in_four_languages() -> None:
    rows = _statements("sensitive_statements.jsonl")
    assert len(rows) >= 300
    assert 0.45 <= sum(r["sensitive"] for r in rows) / len(rows) <= 0.55
    by_language = Counter(r["language"] for r in rows)
    assert set(by_language) == {"en", "fr", "de", "es"} and min(by_language.values()) >= 60
    named = {r["category"] for r in rows if r["sensitive"]}
    assert named == {c.value for c in SensitiveCategory}  # every category is exercised
    assert len({r["text"] for r in rows}) == len(rows)  # no repeats


def test_issue18_item1_P5_detector_recall_and_false_alarms_on_the_labelled_set() -> None:
    recall, false_alarms = _figures(_statements("sensitive_statements.jsonl"))
    # The first held-out set was written after the first lexicon and then seen (its misses
    # guided a second round of words); the second was written after that round and never
    # tuned against. Both are printed, the second is the honest one.
    seen = _figures(_statements("sensitive_statements_heldout.jsonl"))
    unseen = _figures(_statements("sensitive_statements_heldout2.jsonl"))
    print(
        f"\nP5 detector: labelled set recall {recall:.1%}, false alarms {false_alarms:.1%}; "
        f"held-out 1 (seen) {seen[0]:.1%} / {seen[1]:.1%}; "
        f"held-out 2 (unseen) {unseen[0]:.1%} / {unseen[1]:.1%}"
    )
    assert recall >= RECALL_FLOOR
    assert false_alarms <= FALSE_ALARM_CEILING


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("Needs to refill their insulin.", "health"),
        ("Doit renouveler son ordonnance d'insuline.", "health"),
        ("Nimmt Blutdrucktabletten.", "health"),  # a compound, by prefix
        ("Está afiliado al PSOE.", "politics"),
        ("Their daughter is six.", "child"),
        ("Card 4111 1111 1111 1111.", "credentials"),
    ],
)
def test_issue18_item1_P5_inflections_compounds_and_shapes_match(text: str, category: str) -> None:
    found = sensitive_category(text)
    assert found is not None and found.value == category


def test_issue18_item1_P5_the_categories_are_data_shipped_in_the_package() -> None:
    shipped = next(p for p in _places() if p.is_file())
    assert shipped.parts[-4:] == ("engram", "data", "sensitive", "categories.json")
    data = json.loads(shipped.read_text(encoding="utf-8"))
    assert set(data["categories"]) == {c.value for c in SensitiveCategory}
    for languages in data["categories"].values():
        assert {"english", "french", "german", "spanish"} <= set(languages)


def _automatic(store: Store, **learning: Any) -> str:
    settings = {"mode": "automatic", **learning}
    set_agent(store, "helper", {"memory": {"learning": settings}}, "staff:ops")
    return "helper"


def _exchange(store: Store, agent: str, *said: str) -> None:
    info = start_conversation(store, [ANA], agent=agent)
    for text in said:
        append_turn(store, info.id, role="user", author=ANA, text=text)
    append_turn(store, info.id, role="assistant", author=agent, text="Noted.")


def _notes(store: Store) -> list[str]:
    return sorted(v.text or "" for v in list_notes(PersonSession(store, ANA, ANA)))


def _pending(store: Store) -> list[dict[str, Any]]:
    return candidates.list_candidates(PersonSession(store, ANA, ANA), "pending")


def test_issue18_item1_P5_automatic_mode_leaves_sensitive_facts_for_review(store: Store) -> None:
    agent = _automatic(store)
    _exchange(
        store,
        agent,
        "I need to refill my insulin.",
        "I need to call my psychiatrist.",
        "I live in Porto.",
    )
    learn_person(store, ANA, RuleExtractor())
    assert _notes(store) == ["Lives in Porto."]
    waiting = _pending(store)
    assert len(waiting) == 2
    assert all(c["sensitive"] and c["category"] == "health" for c in waiting)


def test_issue18_item1_P5_an_agent_may_name_categories_applied_automatically(
    store: Store,
) -> None:
    assert AgentConfig("a").learning.auto_apply == frozenset()  # the default: none
    agent = _automatic(store, autoApplyCategories=["health"])
    _exchange(store, agent, "I need to refill my insulin.", "I need to pay back my loan.")
    learn_person(store, ANA, RuleExtractor())
    applied, waiting = _notes(store), _pending(store)
    assert len(applied) == 1 and "insulin" in applied[0]
    assert [c["category"] for c in waiting] == ["money"]
    with pytest.raises(InvalidInput, match="autoApplyCategories"):
        AgentConfig.from_json("a", {"memory": {"learning": {"autoApplyCategories": ["hobbies"]}}})


def test_issue18_item1_P5_what_is_allowed_is_said_in_a_sentence() -> None:
    none = AgentConfig.from_json("a", {"memory": {"learning": {"mode": "automatic"}}})
    assert "no category is applied automatically" in auto_apply_sentence(none)
    some = AgentConfig.from_json(
        "a", {"memory": {"learning": {"mode": "automatic", "autoApplyCategories": ["money"]}}}
    )
    assert auto_apply_sentence(some).endswith("applied automatically: money and debts.")
    assert some.to_json()["memory"]["learning"]["autoApplyCategories"] == ["money"]


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    yield fake
    fake.httpd.shutdown()


def test_issue18_item1_P5_the_detector_or_the_extractor_whichever_says_so(
    store: Store, server: FakeServer
) -> None:
    agent = _automatic(store)
    _exchange(store, agent, "I have diabetes.", "My landlord is threatening to evict me.")

    def reply(request: dict[str, Any]) -> Any:
        assert "health (health)" in request["messages"][0]["content"]  # the model is asked
        turns = [t["turn"] for t in json.loads(request["messages"][1]["content"])["turns"]]
        return {
            "notes": [  # the model misses the first; the detector does not
                {"kind": "fact", "text": "Has diabetes.", "turn": turns[0], "sensitive": False},
                {
                    "kind": "fact",
                    "text": "Is threatened with eviction by their landlord.",
                    "turn": turns[1],
                    "sensitive": True,
                    "category": "money",
                    "reason": "housing and rent trouble",
                },
            ]
        }

    server.content = reply
    learn_person(store, ANA, OpenAIExtractor(server.url, "m"))
    assert _notes(store) == []
    by_text = {c["text"]: c for c in _pending(store)}
    assert by_text["Has diabetes."]["category"] == "health"
    evicted = by_text["Is threatened with eviction by their landlord."]
    assert (evicted["category"], evicted["sensitivity_reason"]) == (
        "money",
        "housing and rent trouble",
    )
