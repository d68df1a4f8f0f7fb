"""Reports in plain words: what an erasure did, and whether it held (no JSON on screen)."""

from __future__ import annotations

from engram.control.erasure_report import ErasureReport
from engram.control.wording import counted

# Each table's rows in words, as (one, many).
TABLE_WORDS = {
    "notes": ("note", "notes"),
    "note_texts": ("note text", "note texts"),
    "journal": ("journal entry", "journal entries"),
    "digest": ("digest line", "digest lines"),
    "usage": ("usage record", "usage records"),
    "candidates": ("candidate", "candidates"),
    "log_payloads": ("conversation turn", "conversation turns"),
    "conversation_log": ("conversation log entry", "conversation log entries"),
    "keys": ("key", "keys"),
    "persons": ("person record", "person records"),
    "projection": ("note row", "note rows"),
}


def _rows(table: str, count: int) -> str:
    words = table.replace("_", " ")
    one, many = TABLE_WORDS.get(table, (words, words))
    return counted(count, one, many)


def erasure_summary(report: ErasureReport) -> str:
    """What `erase_person` did, in words: keys destroyed, rows deleted, files scanned, then
    the engine's verdict and advice as it says them (this face makes no verdict of its own)."""
    person = report.person
    when = report.erased_at[:16].replace("T", " ")
    lines = [f"{person} was erased on {when} UTC by {report.actor}.", ""]
    keys = report.keys_destroyed
    lines.append(f"Keys destroyed: {len(keys)} — nothing they protected can be decrypted again.")
    rows = report.rows_deleted
    detail = ", ".join(_rows(table, count) for table, count in sorted(rows.items()) if count)
    lines.append(f"Rows deleted: {sum(rows.values())}" + (f" ({detail})." if detail else "."))
    lines.append(
        f"Conversations deleted: {report.conversations_deleted}; "
        f"turns taken out of shared conversations: {report.turns_excised}."
    )
    scan = report.raw_file_scan
    if scan.scanned:
        lines.append(
            f"Files scanned: {', '.join(scan.scanned)} — looked for "
            f"{counted(scan.looked_for, 'piece')} of erased ciphertext, found {scan.found}."
        )
        lines.append(f"How it was checked: {report.how_checked()}.")
    else:
        lines.append(f"Files scanned: none ({scan.note or 'not a file store'}).")
    if report.wal_checkpoint not in ("", "not applicable"):
        lines.append(
            "Write-ahead log: emptied into the database file."
            if report.wal_checkpoint == "complete"
            else "Write-ahead log: another program was using the store, so it was not emptied."
        )
    lines += ["", f"Result: {report.sentence()}"]
    if report.advice:
        lines.append(f"What to do: {report.advice}")
    record = report.erasure_record
    lines += ["", f"This is erasure record number {record} in the store's erasure log."]
    return "\n".join(lines)
