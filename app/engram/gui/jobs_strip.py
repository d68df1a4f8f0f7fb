"""The jobs strip in the status bar: each long job running now, with its progress and a
Cancel button (issue 17 item 7). It shows what TaskRunner's jobs lane holds; a job that
ends, is cancelled or is dropped by a lock leaves it at once. A job that ends within
SHOWN_AFTER_MS never appears, so a quick search does not flicker in the status bar."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from engram.gui.tasks import Task, TaskRunner

SHOWN_AFTER_MS = 300
BAR_WIDTH = 90


class JobRow(QWidget):
    """One job: its title, a progress bar (moving until it reports), Cancel."""

    def __init__(self, task: Task, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.task = task
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel(task.title)
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)  # busy until the job says how far it is
        self.bar.setFixedWidth(BAR_WIDTH)
        self.bar.setTextVisible(False)
        self.bar.setAccessibleName(f"{task.title}: progress")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setAccessibleName(f"Cancel {task.title}")
        self.cancel_button.setToolTip(f"Stop {task.title}; nothing it was doing is kept.")
        self.cancel_button.setVisible(task.cancellable)
        for widget in (self.title, self.bar, self.cancel_button):
            layout.addWidget(widget)
        task.progressed.connect(self.show_progress)

    def show_progress(self, done: int, total: int) -> None:
        """How far the job is (a total of 0: still counting)."""
        if total > 0:
            self.bar.setRange(0, total)
            self.bar.setValue(min(done, total))
            self.bar.setToolTip(f"{done} of {total}")


class JobsStrip(QWidget):
    """The status bar's list of jobs running now."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Jobs running")
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.rows: dict[int, JobRow] = {}
        self._runner: TaskRunner | None = None
        self.hide()

    def attach(self, runner: TaskRunner) -> None:
        """Follow `runner`'s jobs lane."""
        self._runner = runner
        runner.job_started.connect(self._started)
        runner.job_ended.connect(self._ended)

    def _started(self, task: Task) -> None:
        row = JobRow(task, self)
        row.hide()
        row.cancel_button.clicked.connect(lambda: self._cancel(task))
        self.rows[id(task)] = row
        self._layout.addWidget(row)
        QTimer.singleShot(SHOWN_AFTER_MS, row, lambda: self._reveal(row))

    def _reveal(self, row: JobRow) -> None:
        if id(row.task) in self.rows and self.rows[id(row.task)] is row:
            row.show()
            self.show()

    def _cancel(self, task: Task) -> None:
        if self._runner is not None:
            self._runner.cancel(task)

    def _ended(self, task: Task) -> None:
        row = self.rows.pop(id(task), None)
        if row is not None:
            row.hide()
            row.deleteLater()
        if not any(r.isVisibleTo(self) for r in self.rows.values()):
            self.hide()

    def shown_titles(self) -> list[str]:
        """The titles shown now, oldest first (tests and tools)."""
        return [r.task.title for r in self.rows.values() if r.isVisibleTo(self)]
