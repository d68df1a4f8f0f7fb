"""The erasure report (issue 18 item 9): what erasing a person did and whether it held,
made once by the engine; the CLI, the inspector and `--json` only print it.

The verdict reads every field that can break the promise: a trace of erased ciphertext
left in the files, a scan that could not finish, an erasure still pending, and rows
written by a release before pseudonyms that still hold the person's id in clear (their
signed chains commit to it, so the erase keeps them and counts them). Any of them and the
erasure did not fully hold, whatever else went well.

The JSON has one shape on every backend: a server database has no file to scan, so its
scan looked for nothing and says why (`note`), with the same keys as a file store's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from engram.control.wording import counted, verb
from engram.store.pending_erasure import FINISH_ADVICE

# Where rows keeping a clear id live, and what would take them away.
_CLEAR_ROWS = {
    "conversation_log": "in shared conversations (deleting those conversations removes them)",
    "journal": "in other people's records (erasing those people removes them)",
    "erasures": "in the erasure log, for erasures they did (these stay)",
}


def _clear_rows(table: str, count: int) -> str:
    return f"{counted(count, 'row')} {_CLEAR_ROWS.get(table, 'in ' + table.replace('_', ' '))}"


class ErasureVerdict(StrEnum):
    """Whether the erasure kept its promise: nothing readable about the person remains."""

    HELD = "held"
    DID_NOT_HOLD = "did not hold"


@dataclass(frozen=True, slots=True)
class FileScan:
    """The raw scan of the database files for erased ciphertext (or why there was none)."""

    scanned: tuple[str, ...] = ()
    looked_for: int = 0
    ciphertext_bytes: int = 0
    found: int = 0
    method: str | None = None
    note: str | None = None
    error: str | None = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> FileScan:
        """From the store's scan result (file_scan.scan, or the server database's note)."""
        return cls(
            scanned=tuple(str(name) for name in raw.get("scanned") or ()),
            looked_for=int(raw.get("looked_for") or 0),
            ciphertext_bytes=int(raw.get("ciphertext_bytes") or 0),
            found=int(raw.get("found") or 0),
            method=raw.get("method"),
            note=raw.get("note"),
            error=raw.get("error"),
        )

    def to_json(self) -> dict[str, Any]:
        """Every key, on every backend."""
        return {
            "scanned": list(self.scanned),
            "looked_for": self.looked_for,
            "ciphertext_bytes": self.ciphertext_bytes,
            "found": self.found,
            "method": self.method,
            "note": self.note,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class PageRewrite:
    """Whether every page of the database was rewritten from its live rows (VACUUM)."""

    rewrite: str = "not applicable"
    pages_before: int | None = None
    pages_after: int | None = None
    error: str | None = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> PageRewrite:
        """From the store's rewrite result (dialect.rewrite_pages, or nothing to rewrite)."""
        return cls(
            rewrite=str(raw.get("rewrite") or "not applicable"),
            pages_before=raw.get("pages_before"),
            pages_after=raw.get("pages_after"),
            error=raw.get("error"),
        )

    def to_json(self) -> dict[str, Any]:
        """Every key, on every backend."""
        return {
            "rewrite": self.rewrite,
            "pages_before": self.pages_before,
            "pages_after": self.pages_after,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class ErasureReport:
    """What `erase_person` did, and its verdict with the sentence and advice faces print."""

    person: str
    erased_at: str
    actor: str
    erasure_record: int
    keys_destroyed: tuple[str, ...]
    rows_deleted: Mapping[str, int]
    conversations_deleted: int
    turns_excised: int
    pseudonymized_rows: int
    # Rows a release before pseudonyms signed with the clear id, by table.
    clear_id_rows: Mapping[str, int]
    wal_checkpoint: str
    page_rewrite: PageRewrite
    frames: int
    checkpointed: int
    asked_others_to_let_go: bool
    raw_file_scan: FileScan
    pending_erasures: tuple[int, ...] = field(default=())

    @property
    def clear_ids_in_old_rows(self) -> int:
        """How many remaining rows still hold the person's id in clear."""
        return sum(self.clear_id_rows.values())

    @property
    def verdict(self) -> ErasureVerdict:
        """Held only when nothing of the person is left readable, checked field by field."""
        scan = self.raw_file_scan
        if scan.found or scan.error or self.pending_erasures or self.clear_ids_in_old_rows:
            return ErasureVerdict.DID_NOT_HOLD
        return ErasureVerdict.HELD

    @property
    def held(self) -> bool:
        """Whether the verdict is that the erasure held."""
        return self.verdict is ErasureVerdict.HELD

    def sentence(self) -> str:
        """The verdict as one plain sentence for people."""
        person, scan = self.person, self.raw_file_scan
        if scan.found:
            return (
                f"The erasure did NOT fully hold: {counted(scan.found, 'trace')} of erased "
                f"ciphertext {verb(scan.found, 'is', 'are')} still in the store's files (their "
                "keys are destroyed, but the bytes remain)."
            )
        if scan.error or self.pending_erasures:
            why = scan.error or "the store's files were not yet rewritten"
            return f"The erasure did NOT fully hold: {why}, so nothing proves the bytes are gone."
        clear = self.clear_ids_in_old_rows
        if clear:
            return (
                f"The erasure did NOT fully hold: nothing {person} said can be read, but "
                f"{counted(clear, 'row')} written by an earlier release of Engram still "
                f"{verb(clear, 'holds', 'hold')} the id “{person}” in clear."
            )
        if not scan.scanned:
            return (
                f"The erasure held: every key protecting what was kept about {person} is "
                "destroyed and their rows are deleted; a server database has no file to scan, "
                "so the destroyed keys are the guarantee."
            )
        return (
            f"The erasure held: nothing readable about {person} remains in the store's "
            "files; a record without any content says that an erasure happened."
        )

    @property
    def advice(self) -> str:
        """What to do about a verdict that did not hold, as one sentence ("" when held)."""
        scan = self.raw_file_scan
        if scan.found or scan.error or self.pending_erasures:
            return FINISH_ADVICE[:1].upper() + FINISH_ADVICE[1:] + "."
        if not self.clear_ids_in_old_rows:
            return ""
        where = "; ".join(
            _clear_rows(table, count)
            for table, count in sorted(self.clear_id_rows.items())
            if count
        )
        return (
            "Those rows are signed with the id, so renaming them would break the store's "
            f"proof and Engram keeps them: {where}."
        )

    def how_checked(self) -> str:
        """How "nothing readable remains" was checked, as one clause list."""
        parts = []
        if self.page_rewrite.rewrite == "complete":
            parts.append(
                f"every page of the database was rewritten from its live rows "
                f"({self.page_rewrite.pages_after or 0} pages)"
            )
        if self.wal_checkpoint == "complete":
            parts.append("the write-ahead log was emptied into the file and truncated")
        if self.raw_file_scan.method:
            parts.append(self.raw_file_scan.method)
        return "; ".join(parts) or "the keys were destroyed (there is no file to scan)"

    def to_json(self) -> dict[str, Any]:
        """As printed by `engram person erase --json` (the CLI contract's keys, and more)."""
        return {
            "person": self.person,
            "erased_at": self.erased_at,
            "actor": self.actor,
            "erasure_record": self.erasure_record,
            "keys_destroyed": list(self.keys_destroyed),
            "rows_deleted": dict(self.rows_deleted),
            "conversations_deleted": self.conversations_deleted,
            "turns_excised": self.turns_excised,
            "pseudonymized_rows": self.pseudonymized_rows,
            "clear_ids_in_rows_older_than_pseudonyms": self.clear_ids_in_old_rows,
            "clear_id_rows": dict(self.clear_id_rows),
            "wal_checkpoint": self.wal_checkpoint,
            "page_rewrite": self.page_rewrite.to_json(),
            "frames": self.frames,
            "checkpointed": self.checkpointed,
            "asked_others_to_let_go": self.asked_others_to_let_go,
            "raw_file_scan": self.raw_file_scan.to_json(),
            "pending_erasures": list(self.pending_erasures),
            "readable_remains": not self.held,
            "verdict": self.verdict.value,
            "sentence": self.sentence(),
            "advice": self.advice,
            "how_checked": self.how_checked(),
        }
