"""Turn assembly A1-A9."""

from __future__ import annotations

from engram.engine.assembly import (
    BUDGET_CHARS,
    MAX_DIGEST_LINES,
    MAX_NOTES,
    NOTES_CAVEAT,
    NOTES_HEADING,
    PREFERENCES_HEADING,
    PRIVATE_WITHHELD,
    assemble,
)
from engram.engine.unscoped import unscoped_audience
from engram.model.scope import Audience, Kind, Scope
from tests.unit.notes_factory import SUBJECT, text_note

ALONE = unscoped_audience(SUBJECT)
SHARED = Audience.shared(SUBJECT)


def _profile() -> list:
    return [
        text_note(1, "French", kind=Kind.STYLE, topic="language"),
        text_note(2, "Warm and brief", kind=Kind.STYLE, topic="tone"),
        text_note(3, "Prefers metric units", kind=Kind.PREFERENCE),
    ]


def test_A2_block_stays_within_about_1200_characters() -> None:
    notes = [text_note(i, "x" * 150) for i in range(10, 40)]
    digest = ["y" * 100] * 5
    result = assemble(_profile() + notes, digest, ALONE)
    assert result.used <= BUDGET_CHARS
    assert result.budget == 1200


def test_A3_priority_order_language_tone_preferences_notes_digest() -> None:
    result = assemble(
        _profile() + [text_note(10, "Lives in Grenoble")], ["Talked about skiing"], ALONE
    )
    block = result.block
    order = [
        block.index(s)
        for s in (
            "Language: French",
            "Tone: Warm and brief",
            PREFERENCES_HEADING,
            "Prefers metric units",
            NOTES_HEADING,
            "Lives in Grenoble",
            "Talked about skiing",
        )
    ]
    assert order == sorted(order)


def test_A4_digest_goes_first_then_notes_never_profile() -> None:
    long_prefs = [
        text_note(3 + i, f"preference {i} " + "p" * 80, kind=Kind.PREFERENCE) for i in range(8)
    ]
    notes = [text_note(20 + i, f"note {i} " + "n" * 80) for i in range(6)]
    digest = [f"digest {i} " + "d" * 60 for i in range(5)]
    result = assemble(_profile()[:2] + long_prefs + notes, digest, ALONE)
    dropped = {d.what for d in result.dropped}
    assert "digest line" in dropped
    assert "note" in dropped
    assert "preference" not in dropped and "language" not in dropped
    for pref in long_prefs:
        assert pref.text in result.block
    # and with a generous budget nothing is dropped
    assert assemble(_profile() + notes[:2], digest[:1], ALONE, budget=5000).dropped == ()


def test_A5_at_most_12_notes_and_5_digest_lines() -> None:
    notes = [text_note(10 + i, f"n{i}") for i in range(20)]
    digest = [f"d{i}" for i in range(9)]
    result = assemble(notes, digest, ALONE, budget=10_000)
    assert len([p for p in result.placed if p.section == "notes"]) == MAX_NOTES == 12
    assert (
        sum(1 for line in result.block.splitlines() if line.startswith("- d"))
        == MAX_DIGEST_LINES
        == 5
    )
    assert any("limit of 12" in d.reason for d in result.dropped)


def test_A6_notes_are_omitted_when_heading_and_caveat_cannot_fit() -> None:
    prefs = [text_note(3 + i, "p" * 100, kind=Kind.PREFERENCE) for i in range(10)]
    note = text_note(50, "short fact")
    result = assemble(prefs + [note], [], ALONE)
    assert NOTES_HEADING not in result.block and NOTES_CAVEAT not in result.block
    assert "short fact" not in result.block
    # with room, heading and caveat always come with the notes
    roomy = assemble([note], [], ALONE)
    assert NOTES_HEADING in roomy.block and NOTES_CAVEAT in roomy.block


def test_A7_an_observational_heading_separates_notes_from_preferences() -> None:
    result = assemble(_profile() + [text_note(10, "Lives in Grenoble")], [], ALONE)
    lines = result.block.splitlines()
    assert lines.index(NOTES_HEADING) > lines.index("- Prefers metric units")
    assert lines.index(NOTES_HEADING) < lines.index("- Lives in Grenoble")
    assert NOTES_HEADING.startswith("Observed")


def test_A8_restricted_audience_always_gets_the_notice() -> None:
    with_notes = assemble([text_note(1, "portable fact")], [], SHARED)
    without = assemble([], [], SHARED)
    crowded = assemble([text_note(i, "z" * 300) for i in range(10)], ["d" * 300] * 5, SHARED)
    for result in (with_notes, without, crowded):
        assert PRIVATE_WITHHELD in result.block
        assert result.used <= BUDGET_CHARS
    assert PRIVATE_WITHHELD not in assemble([text_note(1)], [], ALONE).block


def test_A9_unreadable_notes_leave_a_usable_block() -> None:
    result = assemble([], [], ALONE, notes_readable=False)
    assert result.block == ""
    assert not result.notes_readable
    shared = assemble([], [], SHARED, notes_readable=False)
    assert shared.block == PRIVATE_WITHHELD


def test_profile_comes_only_from_eligible_notes() -> None:
    # the caller passes scope-filtered notes; a private language note never makes a profile
    portable = text_note(1, "English", kind=Kind.STYLE, topic="language", scope=Scope.PORTABLE)
    result = assemble([portable], [], SHARED)
    assert "Language: English" in result.block


def test_A6_long_first_note_does_not_empty_section() -> None:
    """Issue 11 item 1: a note too long to fit is dropped on its own (reason "budget");
    heading and caveat still go in with the notes after it."""
    long = text_note(10, "L" * 1_155, scope=Scope.DIRECT)
    tiny = text_note(11, "Tiny.")
    result = assemble([long, tiny], [], ALONE)
    lines = result.block.splitlines()
    assert NOTES_HEADING in lines and NOTES_CAVEAT in lines
    assert "- Tiny." in lines and "L" * 100 not in result.block
    assert [p.note for p in result.placed] == [tiny.note.id]
    assert [(d.what, d.reason, d.note) for d in result.dropped] == [
        ("note", "budget", long.note.id)
    ]
    assert result.used <= BUDGET_CHARS
    # heading and caveat never stand alone: with nothing that fits, the section is left out
    alone = assemble([long], [], ALONE)
    assert NOTES_HEADING not in alone.block and NOTES_CAVEAT not in alone.block


def test_A6_a_dropped_note_frees_its_place_among_the_12() -> None:
    """Issue 11 item 1: the 12 counts notes placed, so a note dropped for the budget does
    not cost a place."""
    notes = [text_note(10, "L" * 2_000)] + [text_note(11 + i, f"n{i}") for i in range(13)]
    result = assemble(notes, [], ALONE)
    placed = [p.note for p in result.placed if p.section == "notes"]
    assert placed == [n.note.id for n in notes[1:13]]
    assert [d.reason for d in result.dropped] == ["budget", "limit of 12 notes"]


def test_A5_preferences_are_profile_and_do_not_count_toward_the_12_notes() -> None:
    """Issue 11 item 5, decided: preferences are profile content (A3, A4), not notes; the
    limit of 12 is the notes section's. 10 preferences and 15 facts place 10 + 12."""
    prefs = [text_note(1 + i, f"p{i}", kind=Kind.PREFERENCE) for i in range(10)]
    facts = [text_note(20 + i, f"f{i}") for i in range(15)]
    result = assemble(prefs + facts, [], ALONE, budget=10_000)
    sections = [p.section for p in result.placed]
    assert sections.count("preferences") == 10
    assert sections.count("notes") == MAX_NOTES == 12
    assert [d.note for d in result.dropped] == [f.note.id for f in facts[12:]]
    assert {d.reason for d in result.dropped} == {"limit of 12 notes"}
    # within the real budget the same rule holds: what drops is notes, never preferences
    real = assemble(prefs + facts, [], ALONE)
    assert sum(1 for p in real.placed if p.section == "preferences") == 10
    assert sum(1 for p in real.placed if p.section == "notes") <= 12
