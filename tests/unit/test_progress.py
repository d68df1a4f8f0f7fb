"""Issue 12 item 5: long work reports progress through a plain callback, and only the CLI
knows the terminal library that draws it."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from engram.control.erase import erase_person
from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.engine.rule_extractor import RuleExtractor
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime import extraction, maintenance, transcript_import
from engram.runtime.conversations import append_turn, start_conversation
from engram.store.store import Store

APP = Path(__file__).resolve().parents[2] / "app" / "engram"


class Recorder:
    """Collects (done, total) calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def __call__(self, done: int, total: int) -> None:
        self.calls.append((done, total))

    def finished(self) -> bool:
        """Counted up one step at a time to a fixed total, and got there."""
        if not self.calls:
            return False
        total = self.calls[-1][1]
        return [d for d, _ in self.calls] == list(range(1, total + 1)) and all(
            t == total for _, t in self.calls
        )


def _people(store: Store, *names: str) -> None:
    for name in names:
        person = PersonId(name)
        conversation = start_conversation(store, [person])
        append_turn(store, conversation.id, role="user", author=person, text="I live in Oslo")
        add_note(
            PersonSession.open(store, person), f"{name} likes tea", Kind.PREFERENCE, Scope.DIRECT
        )


def test_issue12_item5_maintain_counts_every_person(store: Store) -> None:
    _people(store, "ana", "bo", "cy")
    seen = Recorder()
    reports = maintenance.maintain_all(store, progress=seen)
    assert len(reports) == 3 and seen.finished() and seen.calls[-1] == (3, 3)


def test_issue12_item5_learn_counts_people(store: Store) -> None:
    _people(store, "ana", "bo")
    everyone = Recorder()
    extraction.learn_all(store, RuleExtractor(), progress=everyone)
    assert everyone.finished() and everyone.calls[-1] == (2, 2)


def test_issue12_item5_import_counts_conversations(store: Store) -> None:
    lines = []
    for person in ("ana", "bo", "cy", "di"):
        lines.append(json.dumps({"type": "conversation", "participants": [person]}))
        lines.append(json.dumps({"type": "turn", "role": "user", "author": person, "text": "hi"}))
    seen = Recorder()
    created = transcript_import.import_transcript(store, lines, seen)
    assert len(created) == 4 and seen.finished() and seen.calls[-1] == (4, 4)


def test_issue12_item5_C3_erasure_scan_counts_each_pass_over_each_file(store: Store) -> None:
    _people(store, "ana")
    session = PersonSession.open(store, PersonId("ana"))
    add_note(session, "Ana's secret", Kind.FACT, Scope.DIRECT)
    seen = Recorder()
    report = erase_person(session, "ana", seen).to_json()
    scan = report["raw_file_scan"]
    assert scan["found"] == 0 and scan["looked_for"] > 0
    assert seen.finished()
    # One pass of the child's lookup table per file (issue 15: every window, any fragment).
    assert seen.calls[-1][1] == len(scan["scanned"])


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_issue12_item5_only_the_cli_imports_rich() -> None:
    """The core reports through a callback; the terminal library stays in cli/."""
    leaks = [
        str(p.relative_to(APP))
        for p in APP.rglob("*.py")
        if p.relative_to(APP).parts[0] != "cli" and "rich" in _imports(p)
    ]
    assert leaks == []
