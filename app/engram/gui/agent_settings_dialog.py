"""File › Agent settings… (issue 21 item 9): layout only; gui/controllers/agents.py holds
the behaviour. Each setting has a sentence under it saying what it lets the agent do."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTreeWidget,
    QVBoxLayout,
    QWidget,
)

from engram.control.agent_settings import (
    KIND_LABELS,
    KINDS_MEANING,
    SURFACE_LABELS,
    SURFACES_MEANING,
    TOOL_MEANING,
    TOOLS_MEANING,
    WRITABLE_MEANING,
)
from engram.gui.widgets import describe
from engram.model.agents import TOOL_FOR_SETTING, LearningMode
from engram.model.sensitivity import LABELS, SensitiveCategory

MODE_NAMES = {
    LearningMode.OFF: "Off",
    LearningMode.SUGGEST: "Suggest",
    LearningMode.AUTOMATIC: "Automatic",
}
AGENT_ROLE = Qt.ItemDataRole.UserRole + 1  # the agent's name on a list row
SETTING_ROLE = Qt.ItemDataRole.UserRole + 2  # what a checkbox stands for


def _meaning(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setStyleSheet("color: palette(placeholder-text);")
    return label


def _boxes(labels: dict[str, str], columns: int) -> tuple[QWidget, dict[str, QCheckBox]]:
    holder = QWidget()
    grid = QGridLayout(holder)
    grid.setContentsMargins(0, 0, 0, 0)
    boxes: dict[str, QCheckBox] = {}
    for index, (value, text) in enumerate(labels.items()):
        box = QCheckBox(text)
        grid.addWidget(box, index // columns, index % columns)
        boxes[value] = box
    return holder, boxes


class AgentSettingsDialog(QDialog):
    """The configured agents, one agent's settings, and that agent's history."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Agent settings")
        self.resize(1100, 760)
        outer = QVBoxLayout(self)
        self.frozen_label = QLabel()
        self.frozen_label.setWordWrap(True)
        self.frozen_label.setAccessibleName("Why settings cannot be changed")
        self.frozen_label.setVisible(False)
        outer.addWidget(self.frozen_label)
        split = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(split, 1)
        split.addWidget(self._build_list())
        split.addWidget(self._build_form())
        split.setSizes([260, 840])
        buttons = QHBoxLayout()
        self.refusal = QLabel()
        self.refusal.setWordWrap(True)
        self.refusal.setTextFormat(Qt.TextFormat.PlainText)
        self.refusal.setStyleSheet("color: #c0392b;")
        self.refusal.setAccessibleName("Why these settings cannot be saved")
        buttons.addWidget(self.refusal, 1)
        self.revert_button = QPushButton("Re&vert")
        self.save_button = QPushButton("&Save")
        self.close_button = QPushButton("Close")
        self.save_button.setDefault(True)
        for button in (self.revert_button, self.save_button, self.close_button):
            buttons.addWidget(button)
        outer.addLayout(buttons)
        self.close_button.clicked.connect(self.reject)

    def _build_list(self) -> QWidget:
        side = QWidget()
        layout = QVBoxLayout(side)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("<b>Agents</b>"))
        self.agents = QListWidget()
        describe(self.agents, "Configured agents", "Choose an agent to see its settings")
        layout.addWidget(self.agents, 1)
        row = QHBoxLayout()
        self.new_name = QLineEdit()
        self.new_name.setPlaceholderText("a new agent's name")
        describe(
            self.new_name,
            "New agent's name",
            "As the host names the agent when it starts a conversation: letters, digits "
            "and . _ : -",
        )
        self.add_button = QPushButton("&Add")
        row.addWidget(self.new_name, 1)
        row.addWidget(self.add_button)
        layout.addLayout(row)
        return side

    def _build_form(self) -> QWidget:
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        body = QWidget()
        scroll.setWidget(body)
        layout = QVBoxLayout(body)
        self.heading = QLabel()
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        self.heading.setStyleSheet("font-weight: bold; font-size: 14px;")
        layout.addWidget(self.heading)
        self.set_by = _meaning()
        layout.addWidget(self.set_by)
        self.form = QWidget()
        form_layout = QVBoxLayout(self.form)
        form_layout.setContentsMargins(0, 0, 0, 0)
        form_layout.addWidget(self._build_learning())
        form_layout.addWidget(self._build_tools())
        layout.addWidget(self.form)
        history = QGroupBox("History")
        history_layout = QVBoxLayout(history)
        self.history_summary = _meaning()
        history_layout.addWidget(self.history_summary)
        self.history = QTreeWidget()
        self.history.setHeaderLabels(["When", "Who", "What changed"])
        self.history.setRootIsDecorated(False)
        self.history.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.history.setMinimumHeight(140)
        self.history.setColumnWidth(0, 150)
        self.history.setColumnWidth(1, 130)
        describe(self.history, "Settings history", "Every change, newest first")
        history_layout.addWidget(self.history)
        layout.addWidget(history)
        layout.addStretch(1)
        return scroll

    def _build_learning(self) -> QGroupBox:
        group = QGroupBox("Learning from conversations")
        form = QFormLayout(group)
        self.mode = QComboBox()
        for mode, name in MODE_NAMES.items():
            self.mode.addItem(name, mode.value)
        describe(self.mode, "Learning mode", "What learning does with what it finds")
        form.addRow("&Mode:", self.mode)
        self.mode_meaning = _meaning()
        form.addRow("", self.mode_meaning)
        surfaces, self.surfaces = _boxes({s.value: t for s, t in SURFACE_LABELS.items()}, 2)
        form.addRow("Learns on:", surfaces)
        form.addRow("", _meaning(SURFACES_MEANING))
        kinds, self.kinds = _boxes({k.value: t for k, t in KIND_LABELS.items()}, 4)
        form.addRow("Learns:", kinds)
        form.addRow("", _meaning(KINDS_MEANING))
        labels = {c.value: LABELS[c] for c in SensitiveCategory}
        categories, self.auto_apply = _boxes(labels, 3)
        form.addRow("Applies unreviewed:", categories)
        self.auto_apply_meaning = _meaning()
        form.addRow("", self.auto_apply_meaning)
        return group

    def _build_tools(self) -> QGroupBox:
        group = QGroupBox("Memory tools the agent is offered")
        form = QFormLayout(group)
        self.tools: dict[str, QCheckBox] = {}
        for setting, tool in TOOL_FOR_SETTING.items():
            name, _, meaning = TOOL_MEANING[setting].partition(": ")
            box = QCheckBox(name)
            box.setToolTip(f"The {tool} tool")
            self.tools[setting] = box
            form.addRow(box, _meaning(meaning[0].upper() + meaning[1:]))
        kinds, self.writable = _boxes({k.value: t for k, t in KIND_LABELS.items()}, 4)
        form.addRow("May write:", kinds)
        form.addRow("", _meaning(WRITABLE_MEANING))
        form.addRow("", _meaning(TOOLS_MEANING))
        return group
