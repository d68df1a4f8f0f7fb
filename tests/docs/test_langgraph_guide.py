"""The integration guide's LangGraph code runs as printed (issue 16 item 4), so the guide
cannot drift from the adapter it describes."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from engram.control.notes import list_notes
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.store.store import Store
from tests.docs.guide_blocks import GUIDE, block


def test_item4_the_langgraph_guide_runs_as_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guide's one Python block, exactly as printed: a store, an agent, LangMem's
    tools on an EngramStore; the note it makes is Maya's, written by the agent."""
    monkeypatch.chdir(tmp_path)
    example = block("langgraph")
    scope: dict[str, object] = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(example, str(GUIDE), "exec"), scope)
    store = scope["store"]
    assert isinstance(store, Store)
    try:
        made, found = printed.getvalue().splitlines()
        assert made.startswith("created memory ")
        assert [hit["value"]["content"] for hit in json.loads(found)] == ["Prefers green tea."]
        (note,) = list_notes(PersonSession(store, PersonId("maya"), "staff:ops"))
        assert note.text == "Prefers green tea." and note.note.actor == "agent:helper"
    finally:
        store.close()
