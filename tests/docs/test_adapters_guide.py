"""Issue 16 items 4 and 5: the integration guide's Agents SDK example runs exactly as
printed, against an OpenAI-compatible endpoint on loopback (the real OpenAI client, a fake
server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.model.clock import ManualClock
from engram.runtime.conversations import conversations_of, turns
from engram.store.store import Store
from tests.agents_sdk import FakeChatEndpoint
from tests.docs.guide_blocks import GUIDE, block


@pytest.fixture
def endpoint() -> Iterator[FakeChatEndpoint]:
    replies = iter(["Welcome to Grenoble!", "Try the Bastille trail."])
    fake = FakeChatEndpoint(lambda request: next(replies))
    yield fake
    fake.close()


def test_the_agents_sdk_example_runs_as_printed(
    tmp_path: Path,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    endpoint: FakeChatEndpoint,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Two turns: the first is learned from, the second's system prompt carries it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", endpoint.url)
    Store.create("agent.engram", clock=clock).close()  # key in the (test) OS keyring
    exec(compile(block("agents-sdk"), str(GUIDE), "exec"), {"__name__": "adapters_guide"})

    assert capsys.readouterr().out == "Welcome to Grenoble!\nTry the Bastille trail.\n"
    first, second = endpoint.system_prompts()
    assert first == "You are a helpful assistant."
    assert second.startswith("You are a helpful assistant.\n\n") and "Grenoble" in second
    store = Store.open("agent.engram", clock=clock)
    try:
        (conversation,) = conversations_of(store, "maya")
        assert [t for _, t in turns(store, conversation.id)] == [
            "I moved to Grenoble last month.",
            "Welcome to Grenoble!",
            "Where could I go hiking on Sunday?",
            "Try the Bastille trail.",
        ]
    finally:
        store.close()
