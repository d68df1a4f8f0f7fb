"""GUI fixtures: a demo store, the real window and controller, answers instead of dialogs."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings

from engram.control.demo import build_demo
from engram.gui.controller import InspectorController
from engram.gui.idle_lock import IdleLock
from engram.gui.main_window import MainWindow
from engram.model.scope import Scope
from engram.store import crypto
from tests.conftest import PASSPHRASE

SIGNAL_TIMEOUT = 10_000


@dataclass
class FakePrompts:
    """Answers the controller's questions the way a test says; records what it was shown."""

    text: str | None = None
    scope: Scope | None = None
    reason: str | None = ""
    typed: str | None = None
    actor: str | None = "staff:test"
    path: str | None = None
    errors: list[str] = field(default_factory=list)
    reports: list[tuple[str, str]] = field(default_factory=list)
    confirmations: list[tuple[str, str]] = field(default_factory=list)

    def edit_text(self, current: str) -> str | None:
        return self.text

    def choose_scope(self, current: Scope) -> Scope | None:
        return self.scope

    def delete_reason(self) -> str | None:
        return self.reason

    def typed_confirm(self, title: str, html: str, expected: str, action: str) -> str | None:
        self.confirmations.append((title, html))
        return self.typed

    def actor_id(self) -> str | None:
        return self.actor

    def excise_reason(self) -> str | None:
        return self.reason

    def reject_reason(self) -> str | None:
        return self.reason

    def save_path(self, suggested: str) -> str | None:
        return self.path

    def open_path(self) -> str | None:
        return self.path

    def show_report(self, title: str, text: str) -> None:
        self.reports.append((title, text))

    def error(self, message: str) -> None:
        self.errors.append(message)


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.engram"
    build_demo(str(path), passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS)
    return path


@pytest.fixture
def demo_path(demo_template: Path, tmp_path: Path) -> Path:
    """A private copy of the demo store for one test."""
    target = tmp_path / "demo.engram"
    shutil.copy(demo_template, target)
    checkpoint = demo_template.with_name(demo_template.name + ".checkpoint")
    shutil.copy(checkpoint, target.with_name(target.name + ".checkpoint"))
    return target


@dataclass
class Inspector:
    """The window under test."""

    window: MainWindow
    controller: InspectorController
    prompts: FakePrompts
    clock: list[float]


@pytest.fixture
def inspector(qtbot: Any, tmp_path: Path) -> Iterator[Inspector]:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    clock = [0.0]
    idle = IdleLock(minutes=5, clock=lambda: clock[0], check_every_ms=20)
    window = MainWindow()
    qtbot.addWidget(window)
    prompts = FakePrompts()
    controller = InspectorController(window, prompts=prompts, settings=settings, idle=idle)
    window.show()
    yield Inspector(window, controller, prompts, clock)
    controller.lock("test over")


def unlock(qtbot: Any, inspector: Inspector, path: Path, person: str = "maya") -> None:
    """Type the passphrase like a person would and wait until the person's notes show."""
    page = inspector.window.unlock_page
    page.store.setEditText(str(path))
    qtbot.keyClicks(page.passphrase, PASSPHRASE)
    with qtbot.waitSignal(inspector.controller.person_opened, timeout=SIGNAL_TIMEOUT):
        qtbot.mouseClick(page.unlock_button, _left())
    wait_idle(qtbot, inspector)
    if inspector.controller.session and inspector.controller.session.person != person:
        open_person(qtbot, inspector, person)


def open_person(qtbot: Any, inspector: Inspector, person: str) -> None:
    """Click a person in the people list."""
    people = inspector.window.people
    for row in range(people.count()):
        if people.item(row).text().startswith(person + "\n"):
            with qtbot.waitSignal(inspector.controller.person_opened, timeout=SIGNAL_TIMEOUT):
                people.setCurrentRow(row)
            wait_idle(qtbot, inspector)
            return
    raise AssertionError(f"{person} is not listed")


def show_tab(qtbot: Any, inspector: Inspector, tab: Any) -> None:
    """Click a tab and wait for it to load (tabs out of sight load when shown)."""
    inspector.window.tabs.setCurrentWidget(tab)
    wait_idle(qtbot, inspector)


def wait_idle(qtbot: Any, inspector: Inspector) -> None:
    """Wait until no background task is queued or running (and its result delivered)."""
    qtbot.waitUntil(lambda: not inspector.controller.tasks.busy, timeout=SIGNAL_TIMEOUT)


def _left() -> Any:
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton
