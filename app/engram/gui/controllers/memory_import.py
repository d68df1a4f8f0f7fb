"""File › Import memories… (issue 21 item 10): memories kept elsewhere — a list copied out
of another assistant, a Markdown file, mem0's export — for the person on screen, as
candidates to review. Two calls into control/memory_import.py off the UI thread: a preview
of what will be added and skipped, then, once the person agrees, the import itself; the
candidates tab then shows them."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from engram.control.memory_import import MemoryImport, import_memories, preview_memories
from engram.control.wording import counted, quoted
from engram.gui.controllers.hub import Hub
from engram.gui.widgets import offer

LISTED = 25  # the preview names this many memories, then counts the rest
NOTHING = "no memories were imported."


class MemoryImportController(QObject):
    """Memories from a file, for the person on screen, as candidates."""

    imported = Signal(object)  # the MemoryImport once written

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.hub = hub
        self.w = hub.w
        self.w.import_memories_action.triggered.connect(self.import_file)
        hub.session_changed.connect(self._update_action)
        hub.past_changed.connect(lambda _past: self._update_action())

    def _update_action(self) -> None:
        """For the person on screen, and a change: not in the past nor a read-only store."""
        offer(self.w.import_memories_action, self.hub.session is not None, self.hub.frozen)

    def import_file(self) -> None:
        """Ask for the file, preview what it adds, import it once the person agrees."""
        session = self.hub.session
        if session is None or not self.hub.writable():
            return
        path = self.hub.ask(lambda p: p.memories_file(""), NOTHING)
        if not path:
            return
        person = session.person

        def previewed(plan: MemoryImport) -> None:
            text = f"From {plan.file} ({_FORMAT[plan.format]}), for {person}:\n\n{_listing(plan)}"
            if not plan.to_add:
                self.hub.prompts.inform("Nothing to import", f"{text}\n\nNothing was changed.")
                return
            question = (
                f"{text}\n\nEach one waits in the Candidates tab for you to approve or reject; "
                "none becomes a note by itself."
            )
            yes = f"Add {counted(len(plan.to_add), 'candidate')}"
            if self.hub.ask(lambda p: p.question("Import memories", question, yes), NOTHING):
                self.hub.act(
                    lambda: import_memories(session, path, plan.format),
                    lambda done: f"Imported memories from {done.file}: {done.summary(True)}",
                    finished,
                )

        def finished(done: MemoryImport) -> None:
            self.w.tabs.setCurrentWidget(self.w.candidates)
            self.imported.emit(done)

        self.hub.run(lambda _: preview_memories(session, path), previewed)


_FORMAT = {"text": "a plain list", "markdown": "Markdown", "mem0": "a mem0 export"}


def _listing(plan: MemoryImport) -> str:
    """What will be added and what is skipped, memory by memory, then the count."""
    lines = []
    for memory in plan.planned[:LISTED]:
        said = f"• {quoted(memory.text)}"
        if memory.skipped:
            said += f" — skipped: {memory.skipped}"
        elif memory.category:
            said += " — touches a sensitive topic"
        lines.append(said)
    if len(plan.planned) > LISTED:
        more = counted(len(plan.planned) - LISTED, "more memory", "more memories")
        lines.append(f"… and {more}.")
    lines.append("")
    lines.append(plan.summary(False))
    return "\n".join(lines)
