"""The Agents SDK adapter offers the very memory_recall `engram mcp` offers (issue 16
item 4): one specification, whichever face shows it."""

from __future__ import annotations

from engram.mcp.tools import RECALL as MCP_RECALL
from engram.runtime.recall_tool import RECALL


def test_every_face_offers_the_same_recall_tool() -> None:
    assert RECALL == MCP_RECALL
    assert RECALL.openai() == MCP_RECALL.openai()
