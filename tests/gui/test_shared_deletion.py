"""Issue 18 item 5, C4 in the inspector: Delete conversation on a shared conversation offers
"for this person" and "for everyone (staff)"; the preview names the people in words."""

from __future__ import annotations

from typing import Any

from engram.control import notes
from engram.control.session import PersonSession
from engram.model.ids import ConversationId, PersonId
from engram.runtime.conversations import conversations_of
from engram.store.store import Store
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, unlock, wait_idle

MAYA, SAM = PersonId("maya"), PersonId("sam")


def _store(inspector: Inspector) -> Store:
    session = inspector.controller.session
    assert session is not None
    return session.store


def _shared_with_sam(store: Store) -> ConversationId:
    (shared,) = [i.id for i in conversations_of(store, MAYA) if SAM in i.participants]
    return shared


def _delete(qtbot: Any, inspector: Inspector, conversation: str) -> None:
    with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT):
        inspector.window.conversations.delete_requested.emit(conversation)
    wait_idle(qtbot, inspector)


def _sams(store: Store) -> list[tuple[str, str | None]]:
    return [(v.note.id, v.text) for v in notes.list_notes(PersonSession.open(store, SAM))]


def test_issue18_item5_C4_the_inspector_deletes_a_shared_conversation_for_the_person(
    qtbot: Any, inspector: Inspector, demo_path: Any
) -> None:
    unlock(qtbot, inspector, demo_path)
    store = _store(inspector)
    shared = _shared_with_sam(store)
    sams = _sams(store)
    inspector.prompts.chosen, inspector.prompts.typed = "me", "delete"
    _delete(qtbot, inspector, shared)
    (asked,) = [a for kind, a in inspector.prompts.asked if kind == "choose"]
    text, choices = asked
    assert choices == [("me", "Delete for maya"), ("everyone", "Delete for everyone (staff)")]
    assert " with maya and sam is shared with sam. Deleted for maya, maya's turns" in text
    _title, shown = inspector.prompts.confirmations[-1]
    assert "for maya excises maya's turns from it" in shown and "sam keeps it" in shown
    assert shared not in shown.replace(f"title='{shared}'", "")  # the id only in the tooltip
    assert [i.id for i in conversations_of(store, MAYA) if i.id == shared] == []
    assert shared in [i.id for i in conversations_of(store, SAM)]
    assert _sams(store) == sams  # sam's notes untouched


def test_issue18_item5_C4_staff_in_the_inspector_delete_it_for_everyone_naming_each(
    qtbot: Any, inspector: Inspector, demo_path: Any
) -> None:
    unlock(qtbot, inspector, demo_path)
    store = _store(inspector)
    shared = _shared_with_sam(store)
    inspector.prompts.chosen, inspector.prompts.typed = "everyone", "delete"
    _delete(qtbot, inspector, shared)
    _title, shown = inspector.prompts.confirmations[-1]
    assert "for everyone in it: maya and sam." in shown
    assert "<h3>For maya</h3>" in shown and "<h3>For sam</h3>" in shown
    assert shared not in [i.id for i in conversations_of(store, SAM)]


def test_issue18_item5_C4_a_cancelled_choice_deletes_nothing(
    qtbot: Any, inspector: Inspector, demo_path: Any
) -> None:
    unlock(qtbot, inspector, demo_path)
    store = _store(inspector)
    shared = _shared_with_sam(store)
    inspector.prompts.chosen, inspector.prompts.typed = None, "delete"
    inspector.window.conversations.delete_requested.emit(shared)
    wait_idle(qtbot, inspector)
    assert inspector.prompts.confirmations == []  # never reached the typed confirmation
    assert shared in [i.id for i in conversations_of(store, MAYA)]


def test_issue18_item5_the_choice_dialog_answers_the_button_pressed(qtbot: Any) -> None:
    """The real dialog behind `choose`: the key of the button clicked; Cancel is the
    default, so Return alone chooses nothing."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QDialog, QDialogButtonBox

    from engram.gui.dialogs import ChoiceDialog

    choices = [("me", "Delete for maya"), ("everyone", "Delete for everyone (staff)")]
    dialog = ChoiceDialog("Delete conversation", "Shared with sam.", choices)
    qtbot.addWidget(dialog)
    qtbot.mouseClick(dialog.choices["everyone"], Qt.MouseButton.LeftButton)
    assert dialog.result() == QDialog.DialogCode.Accepted and dialog.chosen == "everyone"
    again = ChoiceDialog("Delete conversation", "Shared with sam.", choices)
    qtbot.addWidget(again)
    cancel = again.buttons.button(QDialogButtonBox.StandardButton.Cancel)
    assert cancel.isDefault()
    qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)
    assert again.result() == QDialog.DialogCode.Rejected and again.chosen is None
