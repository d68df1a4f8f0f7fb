"""Issue 21 item 4, decisions that build on each other: the reviewer's edit of their own
correction, a deletion after a change of scope, and changes that are not decisions to bring
back (a note of their own, an undo) — previewed, applied, and counted."""

from __future__ import annotations

from pathlib import Path

from engram.control import notes, undo
from engram.control.review_copy import export_review_copy
from engram.control.review_import import APPLIED, APPLIES, CONFLICT, import_review, preview_review
from engram.control.session import PersonSession
from engram.model.notes import NoteStatus
from engram.model.scope import Kind, Scope
from engram.store.store import Store

REVIEW = "the reviewer's passphrase"


def _copy_with_decisions(store: Store, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    ana = PersonSession.open_new(store, "ana", "staff:dana")
    ids = {
        key: notes.add_note(ana, text, Kind.FACT, Scope.DIRECT, create_person=not i)
        for i, (key, text) in enumerate(
            (("job", "Works as a nurse."), ("city", "Lives in Oslo."), ("pet", "Has a cat."))
        )
    }
    copy_path = tmp_path / "review.engram"
    export_review_copy(ana, copy_path, REVIEW)
    copy = Store.open(str(copy_path), passphrase=REVIEW)
    try:
        rita = PersonSession.open(copy, "ana", "staff:rita")
        midwife = notes.edit_note(rita, ids["job"], text="Works as a midwife.")
        notes.edit_note(rita, midwife, text="Works as a midwife in Bergen.")
        notes.edit_note(rita, ids["city"], scope=Scope.PORTABLE)
        notes.delete_note(rita, ids["city"], "moved away")
        notes.add_note(rita, "Reads a lot.", Kind.FACT, Scope.DIRECT)  # not a decision
        notes.edit_note(rita, ids["pet"], scope=Scope.PORTABLE)
        change = undo.last_change(rita)
        assert change is not None
        undo.undo(rita, change.seq)  # the reviewer's undo stays in the copy
    finally:
        copy.close()
    return copy_path, ids


def test_issue21_item4_decisions_on_the_reviewers_own_changes_follow_them(
    store: Store, tmp_path: Path
) -> None:
    copy_path, ids = _copy_with_decisions(store, tmp_path)
    preview = preview_review(store, copy_path, REVIEW, "staff:dana")
    assert [o.decision.decision for o in preview.outcomes] == [
        "corrected",
        "corrected",
        "rescoped",
        "deleted",
        "rescoped",
    ]
    assert {o.outcome for o in preview.outcomes} == {APPLIES}
    assert preview.not_carried == 2  # the reviewer's own note, and their undo

    done = import_review(store, copy_path, REVIEW, "staff:dana")
    assert [o.outcome for o in done.outcomes] == [APPLIED] * 5
    ana = PersonSession.open(store, "ana", "staff:dana")
    active = {v.text: v.note for v in notes.all_notes(ana) if v.note.is_active}
    assert set(active) == {"Works as a midwife in Bergen.", "Has a cat."}
    assert active["Has a cat."].scope is Scope.PORTABLE  # the undo did not come back
    assert notes.get_note(ana, ids["city"]).status is NoteStatus.DELETED
    again = import_review(store, copy_path, REVIEW, "staff:dana")
    assert {o.outcome for o in again.outcomes} == {"already imported"}


def test_issue21_item4_a_decision_after_one_that_conflicted_conflicts_too(
    store: Store, tmp_path: Path
) -> None:
    copy_path, ids = _copy_with_decisions(store, tmp_path)
    ana = PersonSession.open(store, "ana", "staff:lee")
    notes.edit_note(ana, ids["job"], text="Works as a doctor.")  # live, meanwhile
    done = import_review(store, copy_path, REVIEW, "staff:dana")
    outcomes = [(o.decision.decision, o.outcome) for o in done.outcomes]
    assert outcomes[:2] == [("corrected", CONFLICT), ("corrected", CONFLICT)]
    assert "earlier decision of this review that was not applied" in done.outcomes[1].why
    assert [o.outcome for o in done.outcomes[2:]] == [APPLIED] * 3
    texts = {v.text for v in notes.all_notes(ana) if v.note.is_active}
    assert "Works as a doctor." in texts and not any("midwife" in t for t in texts)
