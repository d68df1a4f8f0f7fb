"""The guides' code runs as written, so they cannot drift from the API they describe."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engram.model.clock import ManualClock
from engram.runtime.conversations import conversations_of
from engram.store.store import Store

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _python_blocks(name: str) -> list[str]:
    text = (DOCS / name).read_text("utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_integration_guide_runtime_example_runs(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runtime example runs a real turn: start, append, assemble, reply."""
    monkeypatch.chdir(tmp_path)
    Store.create("agent.engram", clock=clock).close()  # key in the (test) OS keyring
    example = _python_blocks("integration-guide.md")[0]
    scope: dict[str, object] = {
        "base_prompt": "You are helpful.",
        "call_your_model": lambda prompt, *rest: "Noted.",
    }
    exec(compile(example.replace("...", ""), "integration-guide.md", "exec"), scope)
    store = scope["store"]
    assert isinstance(store, Store)
    try:
        assert "You are helpful." in str(scope["system_prompt"])
        assert len(conversations_of(store, "maya")) == 1
    finally:
        store.close()


def test_every_guide_is_linked_from_the_readme() -> None:
    """A guide nobody can find does not help anyone."""
    readme = (DOCS.parent / "README.md").read_text("utf-8")
    for guide in ("user-guide.md", "staff-guide.md", "integration-guide.md", "security-model.md"):
        assert f"docs/{guide}" in readme, guide
