"""`engram review export|import|info` (issue 21 items 2-4): thin over control/review_copy.py
and control/review_import.py."""

from __future__ import annotations

import argparse
import os
from typing import Any

from engram.cli.context import CommandContext
from engram.cli.output import add_json_flag, emit_json, emit_line, emit_table, shorten
from engram.control import review_copy, review_import
from engram.model.errors import InvalidInput, KeyUnavailable

PASSPHRASE_SOURCES = (
    "--review-passphrase-env VAR, --review-passphrase-file FILE or --review-passphrase-fd N"
)


def register(commands: Any) -> None:
    """Add `review` and its actions."""
    group = commands.add_parser(
        "review", help="a review copy of one person, for an offline reviewer, and its return"
    )
    actions = group.add_subparsers(dest="review_command", metavar="ACTION")
    actions.required = True

    p = actions.add_parser(
        "export",
        help="write a new store holding only one person's memory, sealed under a passphrase "
        "the reviewer chooses",
    )
    p.add_argument("--person", required=True, help="whose memory the copy holds")
    p.add_argument("--to", required=True, metavar="FILE", help="the review copy to write (new)")
    _add_passphrase_sources(p)
    add_json_flag(p)
    p.set_defaults(handler=cmd_export)

    p = actions.add_parser(
        "import",
        help="bring a reviewer's decisions back into this store: a preview, or with --apply "
        "what still applies (conflicts are never overwritten)",
    )
    p.add_argument("file", metavar="FILE", help="the review copy the reviewer worked on")
    p.add_argument(
        "--apply", action="store_true", help="apply what still applies (without it: preview)"
    )
    _add_passphrase_sources(p)
    add_json_flag(p)
    p.set_defaults(handler=cmd_import)

    p = actions.add_parser("info", help="whether this store is a review copy: whose, from where")
    add_json_flag(p)
    p.set_defaults(handler=cmd_info)


def _add_passphrase_sources(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--review-passphrase-env",
        metavar="VAR",
        help="read the review copy's passphrase from this environment variable",
    )
    p.add_argument(
        "--review-passphrase-file",
        metavar="FILE",
        help="read the review copy's passphrase from the first line of this file",
    )
    p.add_argument(
        "--review-passphrase-fd",
        metavar="N",
        type=int,
        help="read the review copy's passphrase from the first line of this open descriptor",
    )


def review_passphrase(args: argparse.Namespace) -> str:
    """The review copy's passphrase, from the one source given."""
    if args.review_passphrase_file:
        try:
            with open(args.review_passphrase_file, encoding="utf-8") as source:
                return source.readline().rstrip("\r\n")
        except OSError as error:
            raise KeyUnavailable(
                f"--review-passphrase-file {args.review_passphrase_file} cannot be read "
                f"({error.strerror})."
            ) from error
    if args.review_passphrase_fd is not None:
        try:
            with os.fdopen(args.review_passphrase_fd, encoding="utf-8", closefd=False) as source:
                return source.readline().rstrip("\r\n")
        except OSError as error:
            raise KeyUnavailable(
                f"--review-passphrase-fd {args.review_passphrase_fd} is not an open file "
                "descriptor."
            ) from error
    if args.review_passphrase_env:
        value = os.environ.get(args.review_passphrase_env)
        if value is None:
            raise KeyUnavailable(
                f"--review-passphrase-env names {args.review_passphrase_env}, but that "
                "environment variable is not set."
            )
        return value
    raise InvalidInput(f"Give the review copy's passphrase with {PASSPHRASE_SOURCES}.")


def cmd_export(ctx: CommandContext) -> int:
    passphrase = review_passphrase(ctx.args)
    written = review_copy.export_review_copy(ctx.session(ctx.args.person), ctx.args.to, passphrase)
    if ctx.as_json:
        emit_json(written.to_json())
    else:
        left = (
            f"; {written.turns_left_out} turns of other participants are left out and marked"
            if written.turns_left_out
            else ""
        )
        emit_line(
            f"Wrote a review copy of {written.person} to {written.path} (through journal entry "
            f"{written.through}, {written.conversations} conversations{left}). It opens only "
            "with the reviewer's passphrase; the copy is recorded in their audit log."
        )
    return 0


def cmd_import(ctx: CommandContext) -> int:
    passphrase = review_passphrase(ctx.args)
    run = review_import.import_review if ctx.args.apply else review_import.preview_review
    result = run(ctx.store(), ctx.args.file, passphrase, ctx.args.actor)
    if ctx.as_json:
        emit_json(result.to_json())
        return 0
    emit_line(result.copy.sentence())
    emit_table(
        ["seq", "decided", "reviewer", "decision", "about", "outcome"],
        [
            (
                o.decision.seq,
                o.decision.decided_at[:10],
                o.decision.reviewer,
                o.decision.decision,
                shorten(o.decision.words, 40),
                o.outcome + (f": {o.why}" if o.why else ""),
            )
            for o in result.outcomes
        ],
    )
    applies = result.count(review_import.APPLIES) + result.count(review_import.APPLIED)
    conflicts, done = result.count(review_import.CONFLICT), result.count(review_import.IMPORTED)
    if result.applied:
        emit_line(
            f"Applied {applies}; {conflicts} conflicted and were left as they are on this "
            f"store; {done} were already imported."
        )
    else:
        emit_line(
            f"Preview: {applies} would apply, {conflicts} conflict, {done} already imported. "
            "Nothing was written; run again with --apply to apply what applies."
        )
    return 0


def cmd_info(ctx: CommandContext) -> int:
    info = review_copy.review_copy_info(ctx.store())
    if ctx.as_json:
        emit_json(info.to_json() if info else {"review_copy": False})
    else:
        emit_line(info.sentence() if info else "This store is not a review copy.")
    return 0
