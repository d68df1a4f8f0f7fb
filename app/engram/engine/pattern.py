"""Pattern mode's query (H2): literal text, and a regular expression when it is one.

A message matches when it contains the query as literal text, or when the query is a
regular expression that matches it. Both are case-sensitive, as pattern mode has always
been; `(?i)` at the start of a regular expression makes it ignore case.

Regular expressions run on RE2: time linear in the text, memory bounded by `max_mem` and
by a cap on the compiled program, whatever the pattern (it comes from the model, so one
prompt injection must not be able to take the host down). RE2 has no backreferences or
lookaround; such a pattern is refused in one sentence, and so is one too large to compile
within those bounds. A query RE2 cannot read for any other reason (`(approx`, `[x`) is
searched for as literal text only, which is what its writer meant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import re2

from engram.model.errors import InvalidInput

MAX_PATTERN_MEMORY = 8 * 1024 * 1024  # RE2's max_mem: program and DFA cache, per pattern
# Each compiled instruction can cost a step per byte when RE2 falls back from its DFA to
# its NFA, so the cap bounds the worst time per byte too (tests/reliability measures it).
MAX_PROGRAM = 5_000
MAX_REPEAT = 1_000  # RE2's limit for a counted repetition (nested ones multiply)

UNSUPPORTED = (
    "Pattern search does not support backreferences or lookaround (it runs in time linear "
    "in the text, with RE2); rewrite the pattern without them, or search for plain text."
)
TOO_LARGE = (
    f"That pattern is too large to search with: counted repetitions may reach {MAX_REPEAT:,} "
    "in all (nested ones multiply) and the whole pattern must stay small; simplify it, or "
    "search for plain text."
)
# Characters with a meaning in a regular expression; a query without any is literal only.
_SPECIAL = frozenset("\\^$.|?*+()[]{}")
# Backtracking-only constructs: lookaround, atomic groups, conditionals, recursion, named
# backreferences ((?P=name)); numbered and \k / \g backreferences are found by the scan.
_BACKTRACKING_GROUP = re.compile(r"\(\?(?:<?[=!]|>|\(|P[=>]|[R&|]|[+-]?\d)")


@dataclass(frozen=True, slots=True)
class PatternQuery:
    """A compiled pattern-mode query: the literal text, and RE2's program when it is one."""

    literal: str
    regex: Any | None  # re2's compiled pattern (the module has no type hints)

    def first(self, text: str) -> tuple[int, int] | None:
        """Where the query first matches `text`: the literal text if it is there, else the
        regular expression's first match; None when neither is found."""
        at = text.find(self.literal)
        if at >= 0:
            return at, at + len(self.literal)
        if self.regex is None:
            return None
        found = self.regex.search(text)
        if found is None:
            return None
        start, end = found.span()
        return int(start), int(end)


def compile_query(query: str) -> PatternQuery:
    """The query ready to search with; InvalidInput (one sentence) for a pattern refused."""
    if not query.isascii():
        try:
            query.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: neither literal text nor RE2 input
            raise InvalidInput(
                "The pattern holds characters that are not valid Unicode; search for "
                "something else."
            ) from None
    if not _SPECIAL.intersection(query):
        return PatternQuery(query, None)  # a regular expression would match just the literal
    if uses_backtracking(query):  # before RE2: it would read \10 as an octal escape
        raise InvalidInput(UNSUPPORTED)
    options = re2.Options()
    options.max_mem = MAX_PATTERN_MEMORY
    options.log_errors = False
    try:
        compiled = re2.compile(query, options)
    except re2.error as error:
        detail = error.args[0] if error.args else b""
        refuse_too_large(query, detail.decode() if isinstance(detail, bytes) else str(detail))
        return PatternQuery(query, None)
    finally:
        # re2.compile keeps its last 128 patterns, each up to max_mem; drop them so memory
        # stays bounded by the one pattern in use.
        re2.purge()
    if compiled.programsize > MAX_PROGRAM:
        raise InvalidInput(TOO_LARGE)
    return PatternQuery(query, compiled)


def refuse_too_large(query: str, reason: str) -> None:
    """Given why RE2 would not compile the query: refuse a pattern too large; for anything
    else the query is not a regular expression (it is searched for as literal text), and
    this returns."""
    if reason.startswith("pattern too large"):
        raise InvalidInput(TOO_LARGE)
    if reason.startswith("invalid repetition size"):
        counts = [int(n) for n in re.findall(r"\d+", reason.partition(":")[2])]
        inverted = len(counts) == 2 and counts[0] > counts[1]  # {3,2}: a typo, not a size
        if not inverted:
            raise InvalidInput(TOO_LARGE)


def uses_backtracking(pattern: str) -> bool:
    """Whether the pattern uses a construct only a backtracking engine has: a numbered or
    named backreference, lookahead or lookbehind, an atomic group, a conditional."""
    at, size = 0, len(pattern)
    in_class = False
    while at < size:
        char = pattern[at]
        if char == "\\":
            following = pattern[at + 1 : at + 2]
            if not in_class and (
                following in set("123456789")
                or (following in ("k", "g") and pattern[at + 2 : at + 3] in ("<", "{", "'"))
            ):
                return True
            at += 2
        elif in_class:
            in_class = char != "]"
            at += 1
        elif char == "[":
            at += 1
            at += pattern[at : at + 1] == "^"
            at += pattern[at : at + 1] == "]"  # a ']' first in a class is a literal
            in_class = True
        elif char == "(" and _BACKTRACKING_GROUP.match(pattern, at):
            return True
        else:
            at += 1
    return False
