"""Reports in plain words: what an erasure did, and whether it held (no JSON on screen)."""

from __future__ import annotations

from typing import Any

from engram.control.erase import how_checked
from engram.control.wording import counted, verb

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


def erasure_summary(report: dict[str, Any]) -> str:
    """What `erase_person` did, as sentences: keys destroyed, rows deleted, files scanned,
    and the result — said plainly when the erasure did not fully hold."""
    person = report.get("person", "the person")
    when = str(report.get("erased_at") or "")[:16].replace("T", " ")
    lines = [f"{person} was erased on {when} UTC by {report.get('actor', 'someone')}.", ""]
    keys = report.get("keys_destroyed") or []
    lines.append(f"Keys destroyed: {len(keys)} — nothing they protected can be decrypted again.")
    rows: dict[str, int] = report.get("rows_deleted") or {}
    detail = ", ".join(_rows(table, count) for table, count in sorted(rows.items()) if count)
    lines.append(f"Rows deleted: {sum(rows.values())}" + (f" ({detail})." if detail else "."))
    lines.append(
        f"Conversations deleted: {report.get('conversations_deleted', 0)}; "
        f"turns taken out of shared conversations: {report.get('turns_excised', 0)}."
    )
    scan: dict[str, Any] = report.get("raw_file_scan") or {}
    scanned = scan.get("scanned") or []
    found = int(scan.get("found") or 0)
    if scanned:
        lines.append(
            f"Files scanned: {', '.join(scanned)} — looked for "
            f"{counted(int(scan.get('looked_for') or 0), 'piece')} of erased ciphertext, "
            f"found {found}."
        )
        lines.append(f"How it was checked: {how_checked(report)}.")
    else:
        lines.append(f"Files scanned: none ({scan.get('note', 'not a file store')}).")
    checkpoint = report.get("wal_checkpoint")
    if checkpoint and checkpoint != "not applicable":
        lines.append(
            "Write-ahead log: emptied into the database file."
            if checkpoint == "complete"
            else "Write-ahead log: another program was using the store, so it was not emptied."
        )
    lines.append("")
    if report.get("readable_remains") or found:
        lines.append(
            f"Result: the erasure did NOT fully hold. {counted(found, 'trace')} of erased "
            f"ciphertext {verb(found, 'is', 'are')} still in the store's files. Their keys are "
            "destroyed, but the "
            "bytes remain: close every other program that has this store open, then erase "
            "again or copy the store to a new file."
        )
    elif checkpoint == "busy":
        lines.append(
            "Result: the erasure held in the database, but another program kept part of the "
            "log open; close it and verify again."
        )
    else:
        lines.append(
            f"Result: the erasure held. Nothing readable about {person} remains in the store's "
            "files; a record without any content says that an erasure happened."
        )
    record = report.get("erasure_record")
    if record:
        lines += ["", f"This is erasure record number {record} in the store's erasure log."]
    return "\n".join(lines)
