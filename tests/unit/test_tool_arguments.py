"""Tool arguments sent as JSON text are bounded like any text from outside (issue 9, the
fuzzed MCP bodies): a 5,000-digit number or 100,000 brackets are a refusal, never an
exception that escapes the tool."""

from __future__ import annotations

import pytest

from engram.runtime.tool_calls import NOT_AN_OBJECT, run_tool


@pytest.mark.parametrize(
    "arguments",
    ['{"limit": ' + "9" * 5_000 + "}", "[" * 100_000 + "]" * 100_000, '"text"', "{nope", "[]"],
)
def test_issue9_text_arguments_that_are_not_a_bounded_object_are_refused(arguments: str) -> None:
    assert run_tool(arguments, lambda args: {"ran": True}) == {"error": NOT_AN_OBJECT}


def test_issue9_a_bounded_object_still_runs_without_the_ignored_arguments() -> None:
    answer = run_tool('{"query": "tea", "person": "ben"}', lambda args: {"got": args})
    assert answer == {"got": {"query": "tea"}}
