"""Issue 16 item 6: the rule extractor keeps time out of facts — when something happened
belongs to the note's validity interval, never to its text."""

from __future__ import annotations

import pytest

from engram.engine.extraction import ExtractionRequest, VisibleTurn
from engram.engine.rule_extractor import RuleExtractor
from engram.model.ids import TurnId


def _texts(said: str) -> list[str]:
    turn = VisibleTurn(TurnId("t1"), "user", said, by_subject=True)
    return [p.text for p in RuleExtractor().extract(ExtractionRequest((turn,), ()))]


@pytest.mark.parametrize(
    ("said", "note"),
    [
        ("I moved to Grenoble last month.", "Lives in Grenoble."),
        ("I moved to Lyon in March.", "Lives in Lyon."),
        ("I've moved to the Bay Area a few weeks ago.", "Lives in the Bay Area."),
        ("I live in New York since 2019.", "Lives in New York."),
        ("I work at Acme since last year.", "Works at Acme."),
        ("I moved to Paris recently, and I love it.", "Lives in Paris."),
    ],
)
def test_issue16_item6_time_words_end_the_value(said: str, note: str) -> None:
    assert note in _texts(said)


@pytest.mark.parametrize(
    ("said", "note"),
    [
        ("I live in Lastovo.", "Lives in Lastovo."),
        ("I work at Monday Inc.", "Works at Monday Inc."),
        ("I moved to Maysville.", "Lives in Maysville."),
    ],
)
def test_issue16_item6_names_that_start_like_time_words_stay_whole(said: str, note: str) -> None:
    assert note in _texts(said)
