"""Layering: Qt only in gui/, SQLAlchemy only in store/, engine and model free of I/O."""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app" / "engram"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def _layer(path: Path) -> str:
    return path.relative_to(APP).parts[0]


def test_no_module_outside_gui_imports_pyside6() -> None:
    leaks = [p for p in APP.rglob("*.py") if _layer(p) != "gui" and "PySide6" in _imports(p)]
    assert leaks == []


def test_no_module_outside_store_imports_sqlalchemy() -> None:
    leaks = [
        p
        for p in APP.rglob("*.py")
        if _layer(p) != "store" and {"sqlalchemy", "alembic"} & _imports(p)
    ]
    assert leaks == []


def test_engine_and_model_do_no_io() -> None:
    forbidden = {
        "sqlalchemy",
        "os",
        "pathlib",
        "socket",
        "subprocess",
        "keyring",
        "nacl",
        "engram.store",
        "engram.runtime",
        "engram.control",
    }
    for layer in ("engine", "model"):
        for path in (APP / layer).rglob("*.py"):
            tree = ast.parse(path.read_text("utf-8"))
            names = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names.update(a.name for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names.add(node.module)
            bad = {
                n for n in names if n in forbidden or any(n.startswith(f + ".") for f in forbidden)
            }
            assert bad == set(), f"{path.name} imports {bad}"


FACES = ("engram.gui.app", "engram.api.server", "engram.mcp.server")


def test_imports_point_down_only() -> None:
    order = [
        "model",
        "engine",
        "store",
        "runtime",
        "control",
        "adapters",
        "cli",
        "api",
        "mcp",
        "gui",
    ]
    for path in APP.rglob("*.py"):
        layer = _layer(path)
        if layer not in order:
            continue
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("engram.")
            ):
                if layer == "cli" and node.module in FACES:
                    continue  # `engram desk`, `serve` and `mcp` launch their faces
                target = node.module.split(".")[1]
                if target in order and target != layer:
                    assert order.index(target) < order.index(layer) or (
                        layer in {"cli", "api", "mcp", "gui"} and target in order[:5]
                    ), f"{path.relative_to(APP)} imports upward from {target}"


# Each framework adapter's libraries (an optional extra) and the module that may import them.
ADAPTER_LIBRARIES = {
    "agents": "adapters/openai_agents.py",
    "langgraph": "adapters/langgraph.py",
    "langmem": "adapters/langgraph.py",
    "langchain_core": "adapters/langgraph.py",
}


def test_adapters_are_faces_no_other_layer_imports_and_only_they_import_their_framework() -> None:
    """Issue 16 item 4: an adapter stands on control/ and runtime/ like any face; nothing
    else imports it, and its framework (an optional extra) is imported in it alone, so
    Engram without the extra never needs the framework."""
    for path in APP.rglob("*.py"):
        where = str(path.relative_to(APP))
        imported = _imports(path)
        for library, owner in ADAPTER_LIBRARIES.items():
            assert library not in imported or where == owner, f"{where} imports {library}"
        if _layer(path) == "adapters":
            continue
        tree = ast.parse(path.read_text("utf-8"))
        modules = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
        } | {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
        assert not {m for m in modules if m.startswith("engram.adapters")}, where


def test_issue16_3_the_http_client_imports_nothing_of_the_engine() -> None:
    """engram.client speaks HTTP only: it runs in an application that does not run Engram,
    so it imports no other part of engram (not even api/'s models, which stand on the
    runtime) and no server library."""
    modules = list((APP / "client").rglob("*.py"))
    assert modules, "engram.client is missing"
    for path in modules:
        imported = _imports(path)
        tree = ast.parse(path.read_text("utf-8"))
        named = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
        } | {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
        engine = {n for n in named if n.startswith("engram.") and not n.startswith("engram.client")}
        assert engine == set(), f"{path.name} imports {engine}"
        server = {"fastapi", "starlette", "uvicorn", "sqlalchemy", "nacl", "keyring"} & imported
        assert server == set(), f"{path.name} imports {server}"
