"""The access report (control.access_report's ReportDocument) printed to PDF with Qt.

Laid out block by block (issue 17 item 14, item 8): each note, turn or row is its own small
QTextDocument, measured and drawn where it fits; one that does not fit the rest of the page
starts the next, so no row is split across pages. No single call is long — the whole
report in one QTextDocument.setHtml held the interpreter for 46–50 s on 100,000 notes,
while one block takes about a millisecond. The inspector and the CLI print in a child
process (control.report_printing, gui.report_printer), so the window never waits on
Qt's layout; QTextDocument and QPdfWriter are no widgets and need no display.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QRectF, Qt
from PySide6.QtGui import (
    QFont,
    QGuiApplication,
    QPageLayout,
    QPageSize,
    QPainter,
    QPdfWriter,
    QTextDocument,
)

from engram.control.access_report import ReportCancelled
from engram.control.report_document import Block, ReportDocument, Section
from engram.model.progress import Progress

RESOLUTION = 300  # dots per inch the layout is measured in (text stays vector)
GAP = 0.06  # inches between blocks
PROGRESS_EVERY = 200  # blocks between progress reports

STYLE = """
body { font-family: 'DejaVu Sans', sans-serif; font-size: 9.5pt; color: #1d1d1d; }
p { margin-top: 0; margin-bottom: 3px; }
h1 { font-size: 17pt; margin: 0; }
h2 { font-size: 13pt; margin: 0; }
.intro { color: #333; margin-top: 4px; }
.head { font-weight: bold; }
.turnhead { color: #555; font-size: 8.5pt; }
.label { color: #555; }
.small { color: #555; font-size: 8pt; }
.removed { color: #6b4b00; font-style: italic; }
.good { color: #0a6b24; font-weight: bold; }
.bad { color: #a00000; font-weight: bold; }
.code { font-family: 'DejaVu Sans Mono', monospace; font-size: 10pt; }
"""


def _e(text: str) -> str:
    return html.escape(text).replace("\n", "<br/>")


def block_html(block: Block) -> str:
    """One block as the HTML its QTextDocument holds."""
    parts: list[str] = []
    if block.heading:
        head = "turnhead" if block.tone in ("turn", "removed") else "head"
        parts.append(f'<p class="{head}">{_e(block.heading)}</p>')
    if block.facts:
        rows = "".join(
            f'<tr><td class="label" width="22%">{_e(label)}</td><td>{_e(value)}</td></tr>'
            for label, value in block.facts
        )
        parts.append(f'<table cellspacing="0" cellpadding="1" width="100%">{rows}</table>')
    css = {"removed": "removed", "small": "small", "good": "good", "bad": "bad"}.get(block.tone)
    for line in block.lines:
        cls = "code" if line.startswith("engram ") else css
        parts.append(f'<p class="{cls}">{_e(line)}</p>' if cls else f"<p>{_e(line)}</p>")
    body = "".join(parts)
    if block.tone in ("note", "removed"):
        shade = "#fbf6e9" if block.tone == "removed" else "#f4f4f4"
        body = (
            f'<table width="100%" cellspacing="0" cellpadding="5" bgcolor="{shade}">'
            f"<tr><td>{body}</td></tr></table>"
        )
    return body


def section_head_html(section: Section, first: bool) -> str:
    """A section's title and introduction (kept with its first block)."""
    tag = "h1" if first else "h2"
    intro = "".join(f'<p class="intro">{_e(line)}</p>' for line in section.intro)
    return f"<{tag}>{_e(section.title)}</{tag}>{intro}"


class _Pages:
    """Draws blocks top to bottom on a QPdfWriter, a new page where a block does not fit."""

    def __init__(self, writer: QPdfWriter, footer: str) -> None:
        self.writer = writer
        self.painter = QPainter(writer)
        area = writer.pageLayout().paintRectPixels(RESOLUTION)
        self.width, self.height = float(area.width()), float(area.height())
        self.footer_room = RESOLUTION * 0.3
        self.usable = self.height - self.footer_room
        self.gap = RESOLUTION * GAP
        self.footer = footer
        self.page = 1
        self.y = 0.0
        self.document = QTextDocument()
        self.document.documentLayout().setPaintDevice(writer)
        self.document.setDefaultStyleSheet(STYLE)
        self.document.setDocumentMargin(0)
        self.document.setTextWidth(self.width)

    def new_page(self) -> None:
        self._draw_footer()
        self.writer.newPage()
        self.page += 1
        self.y = 0.0

    def draw(self, fragment: str) -> None:
        """Lay out one block and draw it whole where it fits."""
        document = self.document
        document.setHtml(fragment)
        height = document.size().height()
        if self.y > 0 and self.y + height > self.usable:
            self.new_page()
        if height <= self.usable:
            self._draw_slice(0.0, height)
            self.y += height + self.gap
            return
        # Taller than a page (a very long message): it runs on over as many pages as it
        # needs, from the top of each; the only case where a block is split.
        offset = 0.0
        while offset < height:
            if self.y > 0:
                self.new_page()
            piece = min(self.usable, height - offset)
            self._draw_slice(offset, piece)
            offset += piece
            self.y = piece + self.gap

    def _draw_slice(self, offset: float, height: float) -> None:
        painter = self.painter
        painter.save()
        painter.translate(0, self.y - offset)
        self.document.drawContents(painter, QRectF(0, offset, self.width, height))
        painter.restore()

    def _draw_footer(self) -> None:
        painter = self.painter
        font = QFont("DejaVu Sans")
        font.setPointSizeF(7.5)
        painter.setFont(font)
        painter.drawText(
            QRectF(0, self.height - self.footer_room * 0.7, self.width, self.footer_room * 0.7),
            int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
            f"{self.footer} · page {self.page}",
        )

    def finish(self) -> None:
        self._draw_footer()
        self.painter.end()


class PdfPrinter:
    """Prints a report section by section and block by block into an A4 PDF in memory
    (any thread: no widget), so its blocks can arrive one at a time (report_printer)."""

    def __init__(self, title: str) -> None:
        self._data = QByteArray()
        self._buffer = QBuffer(self._data)
        self._buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        writer = QPdfWriter(self._buffer)
        writer.setResolution(RESOLUTION)
        writer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
        writer.setPageMargins(QMarginsF(16, 16, 16, 12), QPageLayout.Unit.Millimeter)
        writer.setTitle(title)
        writer.setCreator("Engram")
        self._writer = writer
        self._pages = _Pages(writer, title)
        self._sections = 0
        self._head: str | None = None

    def section(self, section: Section) -> None:
        """Start a section (its blocks follow through `block`)."""
        self._flush_head()
        if section.new_page and self._pages.y > 0:
            self._pages.new_page()
        # The title travels with the first block, so no title is left alone at a page end.
        self._head = section_head_html(section, self._sections == 0)
        self._sections += 1

    def block(self, block: Block) -> None:
        """Lay out one block where it fits."""
        head, self._head = self._head or "", None
        self._pages.draw(head + block_html(block))

    def _flush_head(self) -> None:
        if self._head is not None:
            self._pages.draw(self._head)
            self._head = None

    def finish(self) -> bytes:
        """The PDF's bytes (the printer is done)."""
        self._flush_head()
        self._pages.finish()
        del self._pages, self._writer  # the writer finishes the PDF when it goes
        self._buffer.close()
        return bytes(self._data.data())


def report_pdf(
    report: ReportDocument,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> bytes:
    """The report as an A4 PDF, printed here (tests; report_printer prints it in a child
    process for the inspector)."""
    stop = cancelled or (lambda: False)
    printer = PdfPrinter(report.title)
    total, done = report.block_count(), 0
    for section in report.sections:
        printer.section(section)
        done += 1
        for block in section.blocks:
            printer.block(block)
            done += 1
            if done % PROGRESS_EVERY == 0:
                if stop():
                    raise ReportCancelled
                if progress is not None:
                    progress(done, total)
    return printer.finish()


def offscreen_application() -> QGuiApplication:
    """The Qt application printing needs (fonts), made on the offscreen platform when
    there is none yet, so the command line prints a report without any display."""
    existing = QGuiApplication.instance()
    if isinstance(existing, QGuiApplication):
        return existing
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    return QGuiApplication(["engram"])
