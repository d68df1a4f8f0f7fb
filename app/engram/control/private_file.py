"""Files the inspector and the CLI write for a person to take away (an export, an access
report): readable by their owner only, and written whole or not at all."""

from __future__ import annotations

import contextlib
import glob
import os
import tempfile
from pathlib import Path
from types import TracebackType
from typing import IO

from engram.model.errors import InvalidInput
from engram.store.owner_only import remove_stale

# Said wherever such a file is written (the inspector's message, the CLI's stderr).
NOT_ENCRYPTED = (
    "The file is not encrypted: anyone who can read it sees all of it. Only your user "
    "account can open it; keep it somewhere private and delete it when it is no longer needed."
)


class PrivateFile:
    """A file being written to `path`, owner-only (0600), that appears only when published.

    The bytes go to a temporary file in the same folder, created 0600 by `mkstemp` (O_EXCL,
    so no other user ever sees it, not even for a moment), then synced and renamed over the
    target (an existing, more readable file included). Leaving the `with` block without
    `publish` — an error, a cancel — removes the temporary file: nothing half written stays.
    A missing folder is not created.
    """

    def __init__(self, path: str | os.PathLike[str], what: str = "file") -> None:
        self.target = Path(path)
        self.what = what
        folder = self.target.parent
        if not folder.is_dir():
            raise InvalidInput(
                f"The folder {folder} does not exist; choose another place to save the "
                f"{what}. Nothing was written."
            )
        if self.target.is_dir():
            raise InvalidInput(
                f"{self.target} is a folder; give a file name to save the {what} as. "
                "Nothing was written."
            )
        # What a writer killed before its rename left (issue 15 item 11); one writing now is
        # younger than the age remove_stale waits for.
        remove_stale(folder, f".{glob.escape(self.target.name)}.*.part")
        try:
            fd, temporary = tempfile.mkstemp(
                prefix=f".{self.target.name}.", suffix=".part", dir=folder
            )
        except OSError as error:
            raise self.unwritten(error) from None
        self.temporary = Path(temporary)
        self.out: IO[bytes] = os.fdopen(fd, "wb")
        self.published = False

    def __enter__(self) -> PrivateFile:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        with contextlib.suppress(OSError):
            self.out.close()
        if not self.published:
            self.temporary.unlink(missing_ok=True)

    def write(self, data: bytes) -> None:
        """Add bytes to the temporary file."""
        try:
            self.out.write(data)
        except OSError as error:
            raise self.unwritten(error) from None

    def finish(self) -> None:
        """Flush and sync the whole content to disk (before anyone is told it exists)."""
        try:
            self.out.flush()
            os.fsync(self.out.fileno())
            self.out.close()
        except OSError as error:
            raise self.unwritten(error) from None

    def publish(self) -> Path:
        """Put the finished file in place of the target, in one rename."""
        try:
            os.replace(self.temporary, self.target)
        except OSError as error:
            raise self.unwritten(error) from None
        self.published = True
        return self.target

    def unwritten(self, error: OSError) -> InvalidInput:
        """The one sentence for a write that failed."""
        return InvalidInput(
            f"The {self.what} could not be written to {self.target} "
            f"({error.strerror or error}); choose another folder. Nothing was written."
        )


def write_private(path: str | os.PathLike[str], data: bytes, what: str = "file") -> Path:
    """Write `data` to `path`, owner-only (0600), whole or not at all; returns the path."""
    with PrivateFile(path, what) as file:
        file.write(data)
        file.finish()
        return file.publish()
