"""One write transaction, as the code inside it sees it (opened by Store.write)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import Connection


@dataclass
class WriteTxn:
    """One write transaction; chain heads it moved are checkpointed after commit."""

    conn: Connection
    heads: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    gone: dict[str, str] = field(default_factory=dict)
    revived: dict[str, str] = field(default_factory=dict)
    erased: bool = False
    # Ciphertext this write deleted: a pending-erasure mark keeps its last bytes (sealed)
    # until the files are proven free of them (erasure_marks.py, pending_erasure.py).
    needles: list[bytes] = field(default_factory=list)
    # Run in order inside the transaction once its body is done, before the signed ledger
    # records what it touched and it commits: how an erasing write leaves its mark
    # (erasure_marks.erasing) without the store knowing about erasure.
    before_commit: list[Callable[[], None]] = field(default_factory=list)

    def run_before_commit(self) -> None:
        """Run the hooks registered so far (and any a hook registers)."""
        done = 0
        while done < len(self.before_commit):
            self.before_commit[done]()
            done += 1
