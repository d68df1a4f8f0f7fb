"""The audience simulator tab: the exact block and recall answer for a chosen audience."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal

from engram.control import notes as memory_control
from engram.gui.controllers.hub import Hub
from engram.gui.controllers.panel import PanelController
from engram.gui.tasks import TaskContext
from engram.model.scope import AudienceKind
from engram.runtime import context as turn_context


class AudienceController(PanelController):
    """Previews for the audience chosen; loads when shown."""

    preview_shown = Signal()

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.tab = self.w.audience
        self.w.audience.preview_requested.connect(self.preview)

    def clear(self) -> None:
        self.w.audience.clear()

    def refresh(self) -> None:
        self.preview(self.w.audience.chosen())

    def preview(self, kind: str) -> None:
        """What turn assembly and recall would give this audience."""
        session = self.hub.session
        if session is None:
            return
        audience = memory_control.audience_as(session, AudienceKind(kind))

        def work(_: TaskContext) -> tuple[Any, Any]:
            block = turn_context.preview_block(session.store, session.person, audience)
            answer = turn_context.preview_recall(session.store, session.person, audience)
            return block, answer

        def done(result: tuple[Any, Any]) -> None:
            self.w.audience.show_preview(*result)
            self.preview_shown.emit()

        self.hub.run(work, done)
