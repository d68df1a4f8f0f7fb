"""Issue 18 item 9 (rule C4): the cascade preview is a typed value made by the control layer,
with its verdict and its sentences; the window's dialog, the CLI and HTTP print it, and so
show the same sentences: the people affected, the notes that close, the closed notes whose
words the deletion shreds (item 5) and the suggestions it rejects."""

from __future__ import annotations

import dataclasses
import html
import re
from pathlib import Path
from typing import Any

import pytest

from engram.control.cascade_preview import DeletionVerdict
from engram.control.conversations import delete_conversation, preview_delete
from engram.control.session import PersonSession
from engram.store.store import Store
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, unlock, wait_idle
from tests.unit.test_shared_deletion import ANA, _shared


def _text(page: str) -> str:
    """What the dialog reads as: inline tags gone, block tags a line break, entities read."""
    inline = re.sub(r"</?(span|b|i)\b[^>]*>", "", page)
    return html.unescape(re.sub(r"<[^>]+>", "\n", inline))


def test_issue18_item9_C4_one_cascade_preview_shape_on_every_face(
    qtbot: Any, inspector: Inspector, store: Store, store_path: Path, cli: Any
) -> None:
    s = _shared(store)
    deletion = preview_delete(PersonSession.open(store, ANA), s.conversation)
    preview = deletion.preview
    # The value: frozen, with its verdict, naming who keeps it and each list in sentences.
    with pytest.raises(dataclasses.FrozenInstanceError):
        deletion.done = True  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        preview.sentence = ""  # type: ignore[misc]
    assert preview.verdict is DeletionVerdict.FOR_THEMSELF and not preview.done
    said = preview.sentences()
    assert "for ana excises ana's turns" in said[0] and "ben keeps it" in said[0]
    for words in (
        "These notes close:",
        "“Lives in Oslo”",
        "These closed notes lose their words:",
        "“Is called Ana”",
        "These suggestions are rejected:",
        "“Likes fjords”",
        "Rejected: the conversation it came from was deleted.",
    ):
        assert words in said

    # The CLI prints it, sentence for sentence.
    shown_cli = cli("conversation", "delete", s.conversation, "--person", "ana", "--preview")
    assert shown_cli.code == 0
    assert [w for w in said if w not in shown_cli.out] == []
    # HTTP (and --json) carry the same verdict and sentences.
    as_json = cli(
        "conversation", "delete", s.conversation, "--person", "ana", "--preview", "--json"
    ).json()
    assert as_json["verdict"] == "for_themself" and as_json["sentences"] == list(said)

    # The window's confirmation dialog prints it too.
    unlock(qtbot, inspector, store_path, person="ana")
    inspector.prompts.chosen, inspector.prompts.typed = "me", None  # look, then cancel
    inspector.window.conversations.delete_requested.emit(s.conversation)
    qtbot.waitUntil(lambda: bool(inspector.prompts.confirmations), timeout=SIGNAL_TIMEOUT)
    wait_idle(qtbot, inspector)
    _title, dialog = inspector.prompts.confirmations[-1]
    assert [w for w in said if w not in _text(dialog)] == []
    assert s.anas_note not in dialog  # the window shows words, never a note's id


def test_issue18_item9_C4_the_done_account_is_a_new_value_naming_what_was_done(
    store: Store,
) -> None:
    s = _shared(store)
    ana = PersonSession.open(store, ANA)
    preview = preview_delete(ana, s.conversation)
    done = delete_conversation(ana, s.conversation)
    assert not preview.done and done.done  # the preview is untouched
    assert done.preview.sentence.startswith("The conversation of ")
    assert "was deleted for ana: ana's turns are excised" in done.preview.sentence
    assert done.to_json()["sentence"] == done.preview.sentence
