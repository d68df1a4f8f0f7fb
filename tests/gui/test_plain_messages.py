"""Issue 8 item 12: messages in the window never mention command-line flags or commands.

The window shows its own strings (everything written in gui/) and the one-sentence errors
of the layers below it (control/, runtime/, store/, model/, engine/), which reach it through
the task runner as `str(error)`. This reads every module's syntax tree and checks both; the
command line's own wording (`cli_message=`, printed only by the CLI) is left out.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring

import engram
from engram.model import errors
from tests.conftest import NoKeyring
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector

PACKAGE = Path(engram.__file__).parent
BELOW_THE_WINDOW = ("control", "runtime", "store", "model", "engine")
# Printed to the terminal only, never in a window (none left: `engram desk` without a display
# speaks from cli/no_display.py).
TERMINAL_ONLY: set[tuple[str, str]] = set()
COMMAND_LINE = re.compile(r"(?<![\w-])--[a-z]|\bengram (?!store|inspector)[a-z][a-z-]*\b")


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _command_line_only(tree: ast.AST) -> set[int]:
    """Nodes under a `cli_message=` keyword: the command line's own sentence."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "cli_message":
            found.update(id(inner) for inner in ast.walk(node.value))
    return found


def _terminal_only(path: Path, tree: ast.Module) -> set[int]:
    where = str(path.relative_to(PACKAGE))
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and (where, t.id) in TERMINAL_ONLY for t in node.targets
        ):
            found.update(id(inner) for inner in ast.walk(node.value))
    return found


def _strings(node: ast.AST, skip: set[int]) -> Iterator[ast.Constant]:
    for inner in ast.walk(node):
        if id(inner) in skip:
            continue
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            yield inner


ERRORS = {
    name
    for name, value in vars(errors).items()
    if isinstance(value, type) and issubclass(value, errors.EngramError)
}


def _error_class(func: ast.expr) -> bool:
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    return name in ERRORS


def _module_constants(tree: ast.Module) -> dict[str, str]:
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name) and isinstance(node.value.value, str):
                    constants[target.id] = node.value.value
    return constants


def _window_strings() -> Iterator[tuple[str, int, str]]:
    """(file, line, text) of every string the window can show."""
    for path in sorted((PACKAGE / "gui").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        skip = _docstrings(tree) | _command_line_only(tree) | _terminal_only(path, tree)
        for constant in _strings(tree, skip):
            yield str(path.relative_to(PACKAGE)), constant.lineno, constant.value
    for layer in BELOW_THE_WINDOW:
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            skip = _command_line_only(tree)
            constants = _module_constants(tree)
            for node in ast.walk(tree):
                # An error raised, or built to be raised elsewhere (file_check returns them).
                if isinstance(node, ast.Raise) and node.exc is not None:
                    exc = node.exc
                elif isinstance(node, ast.Call) and _error_class(node.func):
                    exc = node
                else:
                    continue
                where = str(path.relative_to(PACKAGE))
                for constant in _strings(exc, skip):
                    yield where, constant.lineno, constant.value
                for name in ast.walk(exc):
                    if isinstance(name, ast.Name) and name.id in constants and id(name) not in skip:
                        yield where, exc.lineno, constants[name.id]


def test_item12_no_string_the_window_shows_names_a_flag_or_command() -> None:
    strings = list(_window_strings())
    assert len(strings) > 500  # the walk really reads the sources
    offenders = [f"{f}:{line}: {text!r}" for f, line, text in strings if COMMAND_LINE.search(text)]
    assert offenders == []


def test_item12_the_pattern_catches_what_it_is_for() -> None:
    for text in (
        "give the passphrase with --passphrase-env VAR",
        "create one with 'engram init'",
        "('engram agents set NAME --config FILE.json')",
    ):
        assert COMMAND_LINE.search(text), text
    for text in ("Engram stores (*.engram)", "the engram store", "a well-known fact"):
        assert not COMMAND_LINE.search(text), text


def test_item12_no_keyring_unlock_speaks_of_the_passphrase_not_a_flag(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    keyring.set_keyring(NoKeyring())
    page = inspector.window.unlock_page
    page.set_recent([], str(demo_path))
    with qtbot.waitSignal(inspector.controller.failed, timeout=SIGNAL_TIMEOUT) as failed:
        qtbot.mouseClick(page.unlock_button, _left())
    message = str(failed.args[0])
    assert "passphrase" in message and not COMMAND_LINE.search(message)
    assert page.message.text() == message


def test_item12_a_missing_store_says_what_to_do_in_the_window(
    qtbot: Any, inspector: Inspector, tmp_path: Path
) -> None:
    page = inspector.window.unlock_page
    page.set_recent([], str(tmp_path / "nothing-here.engram"))
    page.passphrase.setText("whatever it is")
    with qtbot.waitSignal(inspector.controller.failed, timeout=SIGNAL_TIMEOUT) as failed:
        qtbot.mouseClick(page.unlock_button, _left())
    message = str(failed.args[0])
    assert "There is no store at" in message and not COMMAND_LINE.search(message)


def _left() -> Any:
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton
