"""Issue 20 item 16: docs/rules.md lists every rule id the tests cite (S1…C5), in the
project's own words, and no id that no test cites; every module and test it names exists.

A test cites a rule in its name (`def test_f3_…`, `def test_S2_…`, `def test_rule_a6_…`) or
in a docstring or comment (`(M4)`); a name in code that looks like one is no citation.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "rules.md"
FAMILIES = "FSWMAHRPC"  # the letters docs/rules.md explains
ROW = re.compile(r"^\| \*\*([A-Z]\d{1,2})\*\* \|(.*)$", re.MULTILINE)
IN_NAME = re.compile(rf"^test_(?:rule_)?([{FAMILIES}]\d{{1,2}})(?:_|$)", re.IGNORECASE)
IN_WORDS = re.compile(rf"(?<![\w-])([{FAMILIES}]\d{{1,2}})(?![\w-])")


def _documented() -> dict[str, str]:
    return {m.group(1): m.group(2) for m in ROW.finditer(RULES.read_text(encoding="utf-8"))}


def _cited_in(path: Path) -> dict[str, str]:
    """Each rule id the file's tests cite, with where (for the message)."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            named = IN_NAME.match(node.name)
            if named:
                found.setdefault(named.group(1).upper(), f"{path}:{node.lineno} {node.name}")
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            for rule in IN_WORDS.findall(doc or ""):
                found.setdefault(rule, f"{path} (docstring)")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            for rule in IN_WORDS.findall(token.string):
                found.setdefault(rule, f"{path}:{token.start[0]} (comment)")
    return found


def _cited() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        for rule, where in _cited_in(path).items():
            found.setdefault(rule, str(where).removeprefix(str(ROOT) + "/"))
    return found


def test_issue20_item16_every_rule_a_test_cites_is_in_docs_rules() -> None:
    cited, documented = _cited(), _documented()
    missing = {rule: where for rule, where in cited.items() if rule not in documented}
    assert missing == {}, "cited by tests but not explained in docs/rules.md"


def test_issue20_item16_every_rule_in_docs_rules_is_cited_by_a_test() -> None:
    cited = _cited()
    uncited = sorted(rule for rule in _documented() if rule not in cited)
    assert uncited == [], "docs/rules.md lists rules no test cites"


def test_issue20_item16_docs_rules_names_only_modules_and_tests_that_exist() -> None:
    documented = _documented()
    assert len(documented) >= 50
    missing = []
    for rule, row in documented.items():
        for named in re.findall(r"`([\w/]+\.py)`", row):
            where = ROOT / named if named.startswith("tests/") else ROOT / "app/engram" / named
            if not where.is_file():
                missing.append(f"{rule}: {named}")
    assert missing == []


def test_issue20_item16_the_citation_finder_tells_a_citation_from_code(tmp_path: Path) -> None:
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        '"""Proves S2."""\n'
        "C9 = 'a conversation id, not a rule'\n"
        "def test_f3_confidence() -> None:\n"
        "    x = 1  # and W4, in passing\n"
        "def test_issue20_item9_x() -> None: ...\n",
        encoding="utf-8",
    )
    assert set(_cited_in(sample)) == {"S2", "F3", "W4"}
