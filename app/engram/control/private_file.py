"""Files the inspector writes for a person to take away (an export, an access report):
readable by their owner only, and written whole or not at all."""

from __future__ import annotations

import glob
import os
import tempfile
from pathlib import Path

from engram.model.errors import InvalidInput
from engram.store.owner_only import remove_stale


def write_private(path: str | os.PathLike[str], data: bytes, what: str = "file") -> Path:
    """Write `data` to `path`, owner-only (0600), and return the path.

    The bytes go to a temporary file created 0600 in the same folder, which then replaces
    the target (an existing, more readable file included), so a failure never leaves half a
    file and no other user ever sees it. A missing folder is not created.
    """
    target = Path(path)
    folder = target.parent
    if not folder.is_dir():
        raise InvalidInput(
            f"The folder {folder} does not exist; choose another place to save the {what}. "
            "Nothing was written."
        )
    # What a writer killed before its rename left (issue 15 item 11); one writing now is younger.
    remove_stale(folder, f".{glob.escape(target.name)}.*.part")
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=folder)
    except OSError as error:
        raise _unwritten(target, what, error) from None
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), 0o600)
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except OSError as error:
        raise _unwritten(target, what, error) from None
    finally:
        Path(temporary).unlink(missing_ok=True)
    return target


def _unwritten(target: Path, what: str, error: OSError) -> InvalidInput:
    return InvalidInput(
        f"The {what} could not be written to {target} ({error.strerror or error}); choose "
        "another folder. Nothing was written."
    )
