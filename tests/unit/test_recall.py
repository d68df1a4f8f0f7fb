"""Recall R1-R2 (pure)."""

from __future__ import annotations

import pytest

from engram.engine.recall import (
    NOT_READABLE,
    NOTHING_KEPT,
    RecallStatus,
    clamp_limit,
    recall,
)
from engram.engine.unscoped import unscoped_audience
from engram.model.errors import InvalidInput
from engram.model.scope import Audience
from tests.unit.notes_factory import SUBJECT, text_note

ALONE = unscoped_audience(SUBJECT)


def test_R1_twelve_by_default_twenty_five_at_most_plus_five_digest_lines() -> None:
    notes = [text_note(i) for i in range(40)]
    digest = [f"d{i}" for i in range(9)]
    assert len(recall(notes, digest, ALONE).notes) == 12
    assert len(recall(notes, digest, ALONE, limit=100).notes) == 25
    assert len(recall(notes, digest, ALONE, limit=3).notes) == 3
    assert len(recall(notes, digest, ALONE).digest) == 5
    assert clamp_limit(None) == 12
    with pytest.raises(InvalidInput):
        clamp_limit(0)


def test_R1_recall_keeps_the_ranking_it_is_given() -> None:
    notes = [text_note(i) for i in range(5)]
    assert [t.note.id for t in recall(notes, [], ALONE).notes] == [t.note.id for t in notes]


def test_R2_three_distinct_answers() -> None:
    empty = recall([], [], ALONE)
    assert empty.status is RecallStatus.EMPTY and empty.message == NOTHING_KEPT
    failed = recall([], [], ALONE, readable=False)
    assert failed.status is RecallStatus.UNREADABLE and failed.message == NOT_READABLE
    assert failed.message != empty.message  # a failed read never reads as empty
    restricted = recall([], [], Audience.shared(SUBJECT))
    assert restricted.status is RecallStatus.RESTRICTED
    # The seed's own words, written out here: a test against the constant would follow any
    # edit of it (issue 18 item 16).
    assert empty.message == "nothing has been kept about this person yet"
    assert failed.message == (
        "your notes aren't readable right now, so nothing was recalled; carry on from what "
        "this conversation already tells you — the rest of the turn works normally"
    )
    # the restricted answer is the same whether or not private notes exist
    assert restricted.message == recall([text_note(1)], [], Audience.shared(SUBJECT)).message
    assert "nothing has been kept" not in (restricted.message or "")
    ok = recall([text_note(1)], [], ALONE)
    assert ok.status is RecallStatus.OK and ok.message is None
