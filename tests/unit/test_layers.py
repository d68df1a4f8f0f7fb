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
    order = ["model", "engine", "store", "runtime", "control", "cli", "api", "mcp", "gui"]
    order.append("adapters")  # framework adapters are faces too (issue 16 item 4)
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
                        layer in {"cli", "api", "mcp", "gui", "adapters"} and target in order[:5]
                    ), f"{path.relative_to(APP)} imports upward from {target}"


# Each adapter's framework is an optional extra: only its own module may import it.
FRAMEWORKS = {"agents": "adapters/openai_agents.py"}


def test_only_an_adapter_imports_its_framework() -> None:
    """Issue 16 item 4: Engram works without the extras, so no other module imports one."""
    for framework, home in FRAMEWORKS.items():
        users = [str(p.relative_to(APP)) for p in APP.rglob("*.py") if framework in _imports(p)]
        assert users == [home], framework
