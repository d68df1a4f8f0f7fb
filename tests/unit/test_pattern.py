"""Pattern mode on RE2 (issue 9, item 1; DESIGN H2): literal text or a regular expression,
linear time, bounded memory, refusals in one sentence, and a budget that holds."""

from __future__ import annotations

import random
import subprocess
import sys
import time

import pytest

from engram.engine.history_search import Message
from engram.engine.pattern import (
    MAX_PROGRAM,
    TOO_LARGE,
    UNSUPPORTED,
    compile_query,
    uses_backtracking,
)
from engram.model.errors import InvalidInput
from engram.runtime import pattern_search


@pytest.mark.parametrize(
    ("query", "text", "span"),
    [
        ("$5.00", "it cost $5.00 in all", (8, 13)),  # a valid regex that never matches
        ("(approx", "(approx. 3 km)", (0, 7)),  # not a regex at all
        ("a.c", "abc", (0, 3)),  # a regex, not found literally
        ("a.c", "xa.c abc", (1, 4)),  # literal text first
        ("tea", "green tea", (6, 9)),
        (r"INC-\d+", "see INC-42", (4, 10)),
        ("(?i)TEA", "green tea", (6, 9)),
    ],
)
def test_issue9_item1_H2_literal_text_or_a_regular_expression(
    query: str, text: str, span: tuple[int, int]
) -> None:
    assert compile_query(query).first(text) == span


def test_issue9_item1_H2_case_sensitive_like_pattern_mode_always_was() -> None:
    assert compile_query("Tea").first("green tea") is None
    assert compile_query("T.a").first("green tea") is None


@pytest.mark.parametrize(
    "query",
    [r"(a)\1", r"(?P<x>a)(?P=x)", r"\k<x>", r"\g<1>", "foo(?=bar)", "foo(?!bar)",
     "(?<=a)b", "(?<!a)b", "(?>a+)b", "(?(1)a|b)"],
)  # fmt: skip
def test_issue9_item1_H2_backreferences_and_lookaround_are_refused_in_one_sentence(
    query: str,
) -> None:
    with pytest.raises(InvalidInput) as refused:
        compile_query(query)
    assert str(refused.value) == UNSUPPORTED
    assert UNSUPPORTED.count(". ") == 0 and UNSUPPORTED.endswith(".")


@pytest.mark.parametrize(
    "query",
    ["(?:a{65535}){65535}", "a{1001}", "(?:a{100}){100}", r"\p{L}{50}", ".{0,1000}Z"],
)
def test_issue9_item1_H2_patterns_too_large_are_refused_at_once(query: str) -> None:
    start = time.monotonic()
    with pytest.raises(InvalidInput) as refused:
        compile_query(query)
    assert str(refused.value) == TOO_LARGE
    assert time.monotonic() - start < 0.5


def test_issue9_item1_the_program_cap_is_what_refuses_a_large_but_legal_pattern() -> None:
    assert compile_query(".{0,500}Z").regex.programsize <= MAX_PROGRAM
    with pytest.raises(InvalidInput, match="too large"):
        compile_query(".{0,600}Z")


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"\\1", False),  # an escaped backslash, then a digit
        (r"[\1(?=]", False),  # inside a class nothing is a group or a backreference
        (r"[]\1]", False),  # ']' first in a class is a literal
        (r"(?P<name>x)", False),
        (r"(?<name>x)", False),
        (r"(?:x)", False),
        (r"(?i)x", False),
        (r"x\1", True),
        (r"(?P=name)", True),
        (r"a(?<=b)", True),
        (r"[x]\2", True),
    ],
)
def test_issue9_item1_backtracking_constructs_are_told_apart(pattern: str, expected: bool) -> None:
    assert uses_backtracking(pattern) is expected


def test_issue9_item1_H2_a_slow_search_is_refused_within_the_budget_and_stops() -> None:
    """RE2 is linear but cannot be interrupted: the caller stops waiting at the budget."""
    rng = random.Random(9)
    text = "".join(rng.choice("ab") for _ in range(50_000))
    messages = [Message(f"t{i}", i, text) for i in range(20)]  # ~0.45 s per message
    budget = 0.1
    start = time.monotonic()
    with pytest.raises(InvalidInput, match="takes too long"):
        pattern_search.find(messages, "(?:[ab]{0,100}a){10}c", None, budget)
    assert time.monotonic() - start < budget + 0.05
    # the worker gives up at the next message, not after all twenty
    assert pattern_search.settle(3)


def test_issue9_item1_a_search_behind_a_refused_one_says_so() -> None:
    rng = random.Random(9)
    text = "".join(rng.choice("ab") for _ in range(50_000))
    slow = [Message("t0", 0, text)]
    with pytest.raises(InvalidInput, match="takes too long"):
        pattern_search.find(slow, "(?:[ab]{0,100}a){10}c", None, 0.05)
    with pytest.raises(InvalidInput, match="still finishing"):
        pattern_search.find([Message("t1", 1, "tea")], "tea", None, 0.05)
    assert pattern_search.settle(3)
    assert pattern_search.find([Message("t1", 1, "tea")], "tea", None, 1.0).matches


def test_issue9_item1_a_process_that_exits_right_after_a_refusal_ends_cleanly() -> None:
    """The refused search's RE2 call is still running when the process exits: the exit
    waits for it instead of tearing the thread down inside it (which aborted the CLI)."""
    code = (
        "import random\n"
        "from engram.engine.history_search import Message\n"
        "from engram.model.errors import InvalidInput\n"
        "from engram.runtime import pattern_search\n"
        "rng = random.Random(9)\n"
        "text = ''.join(rng.choice('ab') for _ in range(50_000))\n"
        "try:\n"
        "    pattern_search.find([Message('t', 0, text)], '(?:[ab]{0,100}a){10}c', None, 0.05)\n"
        "except InvalidInput as refused:\n"
        "    print(refused)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "takes too long" in done.stdout and done.stderr == ""
