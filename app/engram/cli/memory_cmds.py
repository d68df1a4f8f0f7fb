"""`engram memories import` (issue 21 item 10): memories kept elsewhere — a plain or
Markdown list, or mem0's export — as candidates for review; thin over
control/memory_import.py."""

from __future__ import annotations

from typing import Any

from engram.cli.argument_help import PERSON_MAYBE_NEW
from engram.cli.context import CommandContext
from engram.cli.output import add_json_flag, emit_json, emit_line, emit_table, shorten
from engram.control import memory_import
from engram.runtime.memory_formats import FORMATS

HELP = "memories kept elsewhere (another assistant's list, mem0's export), as candidates"


def register(commands: Any) -> None:
    """Add `memories` and its action."""
    group = commands.add_parser("memories", help=HELP)
    actions = group.add_subparsers(dest="memories_command", metavar="ACTION")
    actions.required = True
    p = actions.add_parser(
        "import",
        help="each memory of a file becomes a candidate to review, never a note; duplicates "
        "of the person's notes and candidates are skipped",
    )
    p.add_argument(
        "file",
        metavar="FILE",
        help="plain text (one memory a line), Markdown (each list item one memory) or mem0's "
        f"exported JSON (UTF-8, at most {memory_import.MAX_FILE_BYTES:,} bytes)",
    )
    p.add_argument("--person", required=True, help="whose memories they are: " + PERSON_MAYBE_NEW)
    p.add_argument(
        "--format",
        choices=FORMATS,
        help="how the file is written (default: from its name's ending, else its content)",
    )
    p.add_argument(
        "--source",
        metavar="NAME",
        help="where the memories were kept (e.g. the assistant's name), recorded with each",
    )
    p.add_argument(
        "--preview", action="store_true", help="say what would be added and skipped; add nothing"
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_import)


def cmd_import(ctx: CommandContext) -> int:
    args = ctx.args
    session = ctx.session_maybe_new(args.person)
    if args.preview:
        plan = memory_import.preview_memories(session, args.file, args.format, args.source)
    else:
        plan = memory_import.import_memories(
            session, args.file, args.format, args.source, create_person=True
        )
    done = not args.preview
    if ctx.as_json:
        emit_json(plan.to_json(done))
        return 0
    if args.preview:
        emit_table(
            ["line", "kind", "memory", "skipped"],
            [
                (
                    p.where.get("line", p.where.get("mem0_id", p.where.get("entry", ""))),
                    p.kind,
                    shorten(p.text),
                    p.skipped,
                )
                for p in plan.planned
            ],
        )
    emit_line(f"{session.person}, from {plan.file} ({plan.format}): {plan.summary(done)}")
    return 0
