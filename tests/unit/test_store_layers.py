"""Issue 18 item 11: the store has no knots.

`store/` reads top-down: no module of it imports inside a function (the way a cycle is
dodged), its modules' import graph has no cycle, and every encryption context (the
associated data a seal is bound to, the domain a digest or derived key is separated by)
is spelled in one module, `store/contexts.py`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

STORE = Path(__file__).resolve().parents[2] / "app" / "engram" / "store"
PACKAGE = "engram.store"


def _modules() -> dict[str, Path]:
    """Every module of store/ (migrations included), by dotted name."""
    found = {}
    for path in sorted(STORE.rglob("*.py")):
        parts = list(path.relative_to(STORE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join([PACKAGE, *parts])] = path
    return found


def _imported(node: ast.Import | ast.ImportFrom, modules: dict[str, Path]) -> set[str]:
    """The store modules an import statement reaches (`from engram.store import crypto`
    reaches crypto; the package itself is no edge: its __init__ imports nothing)."""
    names: set[str] = set()
    if isinstance(node, ast.Import):
        names = {alias.name for alias in node.names}
    elif node.module and node.level == 0:
        names = {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in names if name in modules and name != PACKAGE}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text("utf-8"))
        edges: set[str] = set()
        for node in ast.walk(tree):  # every import, under TYPE_CHECKING or in a function too
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges |= _imported(node, modules)
        graph[name] = edges - {name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules around it, or None."""
    state: dict[str, int] = {}  # 1 on the path being walked, 2 done
    path: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := walk(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := walk(start)) is not None:
            return found
    return None


# The one import a function may make: Alembic, which only upgrading a store (or naming the
# revisions it can upgrade from) needs, so that opening a current store loads none of it
# (issue 20 item 10). It is no store module, so it can dodge no cycle of theirs.
LAZY = "alembic"


def _lazy(node: ast.Import | ast.ImportFrom) -> bool:
    """Whether the statement imports Alembic and nothing else."""
    if isinstance(node, ast.ImportFrom):
        names = [node.module or ""] if node.level == 0 else [""]
    else:
        names = [alias.name for alias in node.names]
    return all(name == LAZY or name.startswith(f"{LAZY}.") for name in names)


def test_issue18_item11_no_store_module_imports_inside_a_function() -> None:
    inside = []
    for name, path in _modules().items():
        for func in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                inside += [
                    f"{name}:{node.lineno}"
                    for node in ast.walk(func)
                    if isinstance(node, ast.Import | ast.ImportFrom) and not _lazy(node)
                ]
    assert inside == []


def test_issue18_item11_the_store_modules_import_each_other_without_a_cycle() -> None:
    graph = _graph()
    assert len(graph) > 30 and graph[f"{PACKAGE}.store"], "the graph was not built"
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


def test_issue18_item11_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycle(graph) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


# An encryption context as a literal: an AAD like "journal|{store}|..." or a domain like
# b"engram-ledger" or b"payload" (a bytes literal that is a word). Only contexts.py may
# spell one.
_CONTEXT = re.compile(r"^(engram-[a-z-]+|[a-z-]+\|)")
_DOMAIN = re.compile(rb"^[a-z][a-z0-9-]+\n?$")


def _contexts_spelled(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant):
            continue
        value = node.value  # a str part of an f-string is a Constant too
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        domain = isinstance(value, bytes) and _DOMAIN.match(value)
        if isinstance(text, str) and (domain or _CONTEXT.match(text)):
            found.add(repr(value))
    return found


def test_issue18_item11_encryption_contexts_are_spelled_in_one_module() -> None:
    spelled = {
        f"{name}: {text}"
        for name, path in _modules().items()
        if name != f"{PACKAGE}.contexts"
        for text in _contexts_spelled(ast.parse(path.read_text("utf-8")))
    }
    assert spelled == set()


def test_issue18_item11_the_context_check_sees_each_way_of_spelling_one() -> None:
    source = (
        'A = f"journal|{store}|{seq}".encode()\n'
        'B = digest(b"payload", sealed)\n'
        'C = b"engram-erased-ciphertexts-v2\\n"\n'
        'D = b"SQLite format 3\\x00" + b"\\n"\n'
    )
    assert _contexts_spelled(ast.parse(source)) == {
        "'journal|'",
        "b'payload'",
        "b'engram-erased-ciphertexts-v2\\n'",
    }
