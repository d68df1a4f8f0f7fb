"""File > Save access report…: a readable PDF of everything kept about a person.

control.access_report gathers the data; this renders it as HTML and prints it with Qt's own
QTextDocument and QPdfWriter (no other dependency). Both are safe off the UI thread (a
QTextDocument is no widget, and QPdfWriter paints into a buffer), so the whole report —
gather, render, write — runs as one background task, however large it is.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF
from PySide6.QtGui import QPageLayout, QPageSize, QPdfWriter, QTextDocument

from engram.control.access_report import AccessReport, ReportNote, gather
from engram.control.export_record import publish_recorded
from engram.control.private_file import PrivateFile
from engram.control.session import PersonSession
from engram.control.wording import counted, verb
from engram.gui.theme import SCOPE_MEANING
from engram.model.notes import NoteStatus
from engram.model.progress import Progress

STYLE = """
body { font-family: 'DejaVu Sans', sans-serif; font-size: 9.5pt; color: #1d1d1d; }
h1 { font-size: 17pt; margin-bottom: 2px; }
h2 { font-size: 12.5pt; margin-top: 16px; border-bottom: 1px solid #999; }
h3 { font-size: 10.5pt; margin-top: 10px; }
.meta { color: #555; }
.note { margin-top: 7px; }
.text { font-weight: bold; }
.small { color: #555; font-size: 8pt; }
.bad { color: #a00000; font-weight: bold; }
.good { color: #0a6b24; font-weight: bold; }
td, th { padding: 2px 5px; vertical-align: top; }
th { background-color: #e8e8e8; text-align: left; }
"""


def _e(text: object) -> str:
    return html.escape(str(text))


def day(moment: datetime | None) -> str:
    """A date as the report writes it: 3 Mar 2026."""
    return "" if moment is None else f"{moment.day} {moment:%b %Y}"


def minute(moment: datetime) -> str:
    """A time as the report writes it: 3 Mar 2026 14:05 UTC."""
    return f"{day(moment)} {moment:%H:%M} UTC"


def _when(text: str) -> str:
    return minute(datetime.fromisoformat(text))


def _note(item: ReportNote) -> str:
    view = item.view
    note = view.note
    text = view.text if view.text is not None else "[text erased with its conversation]"
    held = (
        f"holds since {day(note.valid_from)}"
        if note.valid_to is None
        else f"held from {day(note.valid_from)} to {day(note.valid_to)}"
    )
    facts = (
        f"{_e(note.kind.value.replace('_', ' '))} · scope <b>{_e(note.scope.value)}</b> "
        f"({_e(SCOPE_MEANING[note.scope])}) · {_e(note.status.value)} · {held} · "
        f"confidence {note.confidence_bp / 100:.0f}%"
    )
    lines = [
        f'<p class="note"><span class="text">{_e(text)}</span><br/>{facts}<br/>',
        f"From: {_e('; '.join(item.sources))}",
    ]
    if note.corroborators:
        count = len(note.corroborators)
        others = "1 other conversation" if count == 1 else f"{count} other conversations"
        lines.append(f"<br/>Confirmed again in {others}")
    if item.closed:
        lines.append(f"<br/>{_e(item.closed)}")
    lines.append(f'<br/><span class="small">id {_e(note.id)}</span></p>')
    return "".join(lines)


def _table(headers: Iterable[str], rows: Iterable[Iterable[object]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return (
        f'<table border="1" cellspacing="0" cellpadding="2" width="100%">'
        f"<tr>{head}</tr>{body}</table>"
    )


def report_html(report: AccessReport) -> str:
    """The report as HTML for QTextDocument: every section, in reading order."""
    holding = [n for n in report.notes if n.view.note.status is NoteStatus.ACTIVE]
    closed = [n for n in report.notes if n.view.note.status is not NoteStatus.ACTIVE]
    verify_class = "good" if report.verify_ok else "bad"
    parts = [
        f"<html><head><style>{STYLE}</style></head><body>",
        f"<h1>What Engram keeps about {_e(report.person)}</h1>",
        f'<p class="meta">Access report made {_e(minute(report.generated_at))} by '
        f"{_e(report.generated_by)} · store {_e(report.store_id)}</p>",
        "<h2>Summary</h2><p>",
        f"{counted(len(holding), 'note')} {verb(len(holding), 'holds', 'hold')} now and "
        f"{counted(len(closed), 'earlier or closed note')} {verb(len(closed), 'is', 'are')} "
        f"kept; {counted(len(report.conversations), 'conversation')}; "
        f"{counted(len(report.candidates), 'suggested note')} (candidates); "
        f"{counted(len(report.audit), 'entry', 'entries')} in the audit log. Notes were put "
        f"into a turn or a tool's answer {counted(report.usage_events, 'time')}.</p>",
        f'<p class="{verify_class}">{_e(report.verify_sentence)}</p>',
        f"<p>{_e(report.erasure_sentence)}</p>",
        "<h2>Notes that hold now</h2>",
        "".join(_note(n) for n in holding) or "<p>None.</p>",
        "<h2>Earlier and closed notes</h2>",
        "<p>Kept so the history can be checked; closed notes are not used.</p>",
        "".join(_note(n) for n in closed) or "<p>None.</p>",
        "<h2>Profile and recent-conversation digest</h2>",
        f"<p>{_e(report.profile).replace(chr(10), '<br/>') or 'No profile has been built.'}</p>",
        _table(
            ["Date", "Digest line"],
            [(day(at), text or "[erased with its conversation]") for at, text in report.digest],
        )
        if report.digest
        else "<p>No digest lines.</p>",
        "<h2>Conversations</h2>",
        _conversations(report),
        "<h2>Suggested notes (candidates)</h2>",
        _candidates(report.candidates),
        "<h2>Audit log</h2>",
        "<p>Every change to this person's memory, oldest first: when, who, what.</p>",
        _table(
            ["When", "Who", "What"],
            [(_when(r["at"]), r["actor"], _action(r)) for r in report.audit],
        ),
        "<h2>Integrity and erasure</h2>",
        f'<p class="{verify_class}">{_e(report.verify_sentence)}</p>',
        "".join(f'<p class="bad">{_e(p)}</p>' for p in report.verify_problems),
        f"<p>{_e(report.erasure_sentence)}</p>",
        _deleted(report),
        "</body></html>",
    ]
    return "".join(parts)


def _action(row: dict[str, Any]) -> str:
    extra = row.get("reason") or row.get("line")
    said = str(row.get("said", row["action"]))  # notes by their words, not their ids
    return f"{said} — “{extra}”" if extra else said


def _conversations(report: AccessReport) -> str:
    if not report.conversations:
        return "<p>None.</p>"
    rows = []
    for c in report.conversations:
        notes = []
        if c.info.incognito:
            notes.append("incognito: teaches nothing")
        if c.removed_tool_results:
            notes.append(f"{c.removed_tool_results} tool result(s) removed")
        rows.append(
            (
                day(c.info.created_at),
                ", ".join(c.info.participants),
                c.first_words or "[no readable words]",
                c.turns,
                "; ".join(notes),
            )
        )
    return _table(["Date", "People", "First words", "Turns", "Notes"], rows)


def _candidates(candidates: list[dict[str, Any]]) -> str:
    if not candidates:
        return "<p>None.</p>"
    rows = [
        (
            c.get("text") or "[erased with its conversation]",
            f"{c['kind']}, {c['scope']}",
            c["status"],
            f"{_when(c['suggested_at'])} by {c['suggested_by']}" if c.get("suggested_at") else "",
        )
        for c in candidates
    ]
    return _table(["Suggested note", "Kind, scope", "Status", "Suggested"], rows)


def _deleted(report: AccessReport) -> str:
    if not report.deleted_conversations:
        return ""
    rows = [
        (
            minute(d.at),
            d.actor,
            d.notes_closed,
            "" if d.rows_deleted is None else d.rows_deleted,
        )
        for d in report.deleted_conversations
    ]
    return "<h3>Deleted conversations</h3>" + _table(
        ["Deleted", "By", "Notes closed", "Rows deleted"], rows
    )


def pdf_bytes(document_html: str, title: str) -> bytes:
    """Print HTML to an A4 PDF in memory (any thread: no widget is involved)."""
    document = QTextDocument()
    document.setHtml(document_html)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
    writer.setPageMargins(QMarginsF(16, 16, 16, 16), QPageLayout.Unit.Millimeter)
    writer.setTitle(title)
    writer.setCreator("Engram")
    document.print_(writer)
    del writer  # finishes the PDF
    buffer.close()
    return bytes(data.data())


def save_access_report(
    session: PersonSession,
    path: str,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Path | None:
    """Gather, render and write the report to `path`, owner-only (0600), and record it in
    the person's audit log. None, with nothing written or recorded, when `cancelled` says
    stop (a lock came meanwhile)."""
    stop = cancelled or (lambda: False)
    report = gather(session, progress, stop)
    if stop():
        return None
    title = f"What Engram keeps about {report.person}"
    data = pdf_bytes(report_html(report), title)
    if stop():
        return None
    with PrivateFile(path, "access report") as file:
        file.write(data)
        file.finish()
        return publish_recorded(session, file, "access_report")
