"""The guides' code runs as written, so they cannot drift from the API they describe."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.control.notes import list_notes
from engram.control.session import PersonSession
from engram.model.clock import ManualClock
from engram.model.ids import PersonId
from engram.runtime.agents import set_agent
from engram.runtime.conversations import conversations_of
from engram.store.store import Store
from tests.docs.guide_blocks import GUIDE, block, marked

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_issue16_item5_the_guide_creates_a_store_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A newcomer's first step works on an empty folder: the store it makes then opens."""
    monkeypatch.chdir(tmp_path)
    exec(compile(block("create-store"), str(GUIDE), "exec"), {})
    Store.open("agent.engram").close()  # key in the (test) OS keyring


def test_issue16_item5_the_runtime_and_learning_examples_run_as_printed(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real turn (start, append, assemble, reply), then learning off the reply path: with
    learning automatic (section 3) the person's words become "Lives in Grenoble." (#16.6)."""
    monkeypatch.chdir(tmp_path)
    made = Store.create("agent.engram", clock=clock)
    set_agent(made, "helper", {"memory": {"learning": {"mode": "automatic"}}}, "operator")
    made.close()
    scope: dict[str, object] = {
        "base_prompt": "You are helpful.",
        "call_your_model": lambda prompt, *rest: "Noted.",
    }
    runtime = block("runtime").replace("...", "")
    exec(compile(runtime, str(GUIDE), "exec"), scope)
    exec(compile(block("learning"), str(GUIDE), "exec"), scope)
    store = scope["store"]
    assert isinstance(store, Store)
    try:
        assert "You are helpful." in str(scope["system_prompt"])
        assert len(conversations_of(store, "maya")) == 1
        notes = list_notes(PersonSession(store, PersonId("maya"), "maya"))
        assert [n.text for n in notes] == ["Lives in Grenoble."]
    finally:
        store.close()


def test_issue16_item5_every_block_of_the_guide_is_run_by_a_test() -> None:
    tested = {"create-store", "runtime", "learning", "http-client", "agents-sdk", "langgraph"}
    assert sorted(marked()) == sorted(tested)


def test_every_guide_is_linked_from_the_readme() -> None:
    """A guide nobody can find does not help anyone."""
    readme = (DOCS.parent / "README.md").read_text("utf-8")
    for guide in ("user-guide.md", "staff-guide.md", "integration-guide.md", "security-model.md"):
        assert f"docs/{guide}" in readme, guide
