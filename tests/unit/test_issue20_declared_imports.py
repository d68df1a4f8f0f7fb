"""Issue 20 item 1: installing, truthfully. Every library the installed package imports
(outside the adapters, which are optional extras) comes with `pip install engram-inspector`:
it is a declared requirement or one of theirs. `engram.client` imported httpx, which only
the test tools brought, so `from engram.client import EngramClient` failed in a pipx or
plain venv install."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "app" / "engram"


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ (]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _installed_with(declared: set[str]) -> set[str]:
    """The declared distributions and, transitively, what each requires without an extra."""
    seen: set[str] = set()
    todo = list(declared)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            needs = requires(name) or []
        except PackageNotFoundError:
            continue
        todo += [_name(r) for r in needs if "extra" not in r.partition(";")[2]]
    return seen


def test_issue20_item1_every_library_the_package_imports_comes_with_its_install() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    closure = _installed_with({_name(r) for r in project["dependencies"]})
    owners = packages_distributions()
    missing: dict[str, str] = {}
    for path in PACKAGE.rglob("*.py"):
        if "adapters" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top == "engram":
                    continue
                dists = {_name(d) for d in owners.get(top, [top])}
                if not dists & closure:
                    missing.setdefault(top, str(path.relative_to(ROOT)))
    assert missing == {}, f"imported but not installed with engram-inspector: {missing}"
