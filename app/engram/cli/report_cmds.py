"""`engram report PERSON --output FILE` and `engram verify-report FILE` (issue 17 item 14).

The report is the inspector's signed PDF, printed by a child process on Qt's offscreen
platform (no display needed). Checking one needs no Qt at all: only the store's public key.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from engram.cli.context import CommandContext
from engram.cli.output import add_json_flag, emit_json, emit_line, emit_warning
from engram.cli.progress import progress_bar
from engram.control.access_report_file import save_access_report
from engram.control.private_file import NOT_ENCRYPTED
from engram.control.report_signature import check_report
from engram.model.errors import InvalidInput

EXIT_NOT_VERIFIED = 3  # as `engram verify` when the store is not intact


def register(commands: Any) -> None:
    """Add the report commands."""
    p = commands.add_parser(
        "report",
        help="a person's access report: a signed PDF of everything kept about them, "
        "recorded in their audit log",
    )
    p.add_argument("person", metavar="PERSON", help="the person the report is about")
    p.add_argument(
        "--output",
        metavar="FILE",
        required=True,
        help="write it to FILE (a PDF), readable by you only (it is not encrypted)",
    )
    p.set_defaults(handler=cmd_report)

    p = commands.add_parser(
        "verify-report",
        help="say whether an access report came from this store unaltered (exit 0 only then)",
    )
    p.add_argument("file", metavar="FILE", help="the access report (PDF) to check")
    add_json_flag(p)
    p.set_defaults(handler=cmd_verify_report)


# engram-inspector-headless leaves Qt out (issue 20 item 11); the report is printed with it.
NO_QT = (
    "An access report is printed with Qt, which this install leaves out "
    "(engram-inspector-headless, for servers): install engram-inspector to write one; "
    "nothing was written or recorded."
)


def cmd_report(ctx: CommandContext) -> int:
    if importlib.util.find_spec("PySide6") is None:  # before anything is opened or recorded
        raise InvalidInput(NO_QT)
    session = ctx.session(ctx.args.person)
    with progress_bar(ctx, "Writing the access report") as progress:
        written = save_access_report(session, ctx.args.output, progress)
    emit_warning(
        f"The access report about {session.person} was written to {written}; "
        f"'engram verify-report {written}' checks it. {NOT_ENCRYPTED}"
    )
    return 0


def cmd_verify_report(ctx: CommandContext) -> int:
    path = Path(ctx.args.file)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InvalidInput(
            f"The file {path} cannot be read ({error.strerror or error}); check its name."
        ) from None
    store = ctx.store()
    check = check_report(data, store.info.id, store.info.verify_key)
    if ctx.as_json:
        emit_json({"ok": check.ok, "verdict": check.verdict.value, "message": check.sentence})
    else:
        emit_line(check.sentence)
    return 0 if check.ok else EXIT_NOT_VERIFIED
