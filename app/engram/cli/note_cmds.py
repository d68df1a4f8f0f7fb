"""`engram notes …`: list, show, add, edit, delete a person's notes, many at once, and undo
the last change."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engram.cli.argument_help import NOTE, PERSON, PERSON_MAYBE_NEW
from engram.cli.context import CommandContext
from engram.cli.output import (
    add_json_flag,
    emit_json,
    emit_json_items,
    emit_line,
    emit_table,
    shorten,
)
from engram.control import bulk_notes, notes, undo
from engram.control.bulk_notes import BulkAction, ListedNote
from engram.control.note_stream import stream_notes
from engram.control.views import NoteView
from engram.control.wording import actor_named, percent
from engram.model.clock import iso, parse_time
from engram.model.errors import InvalidInput, NotFound
from engram.model.ids import ConversationId
from engram.model.scope import Durability, Kind, Scope, parse_enum
from engram.runtime.note_writes import MAX_NOTE_CHARS

NOTE_TEXT = f"the note's text (at most {MAX_NOTE_CHARS:,} characters)"


def register(commands: Any) -> None:
    """Add `notes` and its actions."""
    group = commands.add_parser("notes", help="a person's notes")
    actions = group.add_subparsers(dest="notes_command", metavar="ACTION")
    actions.required = True

    p = actions.add_parser("list", help="active notes (or all, or as of a moment)")
    p.add_argument("--person", required=True, help=PERSON)
    p.add_argument("--all", action="store_true", help="include closed intervals")
    p.add_argument("--as-of", metavar="ISO-TIME", help="the notes as they stood then")
    add_json_flag(p)
    p.set_defaults(handler=cmd_list)

    p = actions.add_parser("show", help="versions, sources, corroborators, confidence, usage")
    p.add_argument("note", help=NOTE)
    p.add_argument("--person", required=True, help=PERSON)
    add_json_flag(p)
    p.set_defaults(handler=cmd_show)

    p = actions.add_parser("add", help="add a person's own note; prints its id")
    p.add_argument("--person", required=True, help=PERSON_MAYBE_NEW)
    p.add_argument("--text", required=True, help=NOTE_TEXT)
    p.add_argument("--kind", required=True, help="fact, preference, open_thread or style")
    p.add_argument("--scope", required=True, help="direct, unspecified or portable")
    p.add_argument("--transient", action="store_true", help="retire after four hours")
    p.add_argument(
        "--confidence",
        type=int,
        metavar="BP",
        help="basis points, 0-10000 (8500 is 85%%, as the CLI prints it)",
    )
    p.add_argument("--conversation", help="the conversation this note comes from")
    p.add_argument("--topic", help="for style notes: language or tone")
    add_json_flag(p)
    p.set_defaults(handler=cmd_add)

    p = actions.add_parser("edit", help="new text (a new version) and/or a new scope")
    p.add_argument("note", help=NOTE)
    p.add_argument("--person", required=True, help=PERSON)
    p.add_argument(
        "--text",
        help=f"the new text (at most {MAX_NOTE_CHARS:,} characters); this makes a new "
        "version with a new id, which the command prints",
    )
    p.add_argument("--scope", help="the new scope: direct, unspecified or portable")
    add_json_flag(p)
    p.set_defaults(handler=cmd_edit)

    p = actions.add_parser("delete", help="close a note's interval (the record stays)")
    p.add_argument("note", help=NOTE)
    p.add_argument("--person", required=True, help=PERSON)
    p.add_argument(
        "--reason",
        help=f"why, kept in the audit log (at most {notes.MAX_REASON_CHARS} characters)",
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_delete)

    p = actions.add_parser(
        "bulk",
        help="delete, rescope or forget many notes in one transaction, after a preview",
        description="Lists the notes first and changes nothing without --yes. 'forget' "
        "deletes the notes and erases their words for good (every version, and the "
        "suggestion each came from); --about PHRASE takes every note holding the word or "
        "phrase (closed ones too when forgetting).",
    )
    p.add_argument("action", choices=[a.value for a in BulkAction], help="what to do")
    p.add_argument("--person", required=True, help=PERSON)
    p.add_argument("--note", action="append", default=[], metavar="NOTE", help=NOTE)
    p.add_argument("--about", metavar="PHRASE", help="every note holding this word or phrase")
    p.add_argument("--scope", help="rescope: the new scope (direct, unspecified or portable)")
    p.add_argument("--reason", help="delete: why, kept in the audit log")
    p.add_argument("--yes", action="store_true", help="apply the change the preview lists")
    add_json_flag(p)
    p.set_defaults(handler=cmd_bulk)

    p = actions.add_parser(
        "undo",
        help="name, then undo, the acting person's last change to these notes",
        description="Names the last edit, change of scope, deletion or decision on a "
        "suggestion that --actor made to the person's notes, and changes nothing without "
        "--yes. A change of many notes at once is undone whole. The undo is a new step in "
        "the journal: the audit log keeps both.",
    )
    p.add_argument("--person", required=True, help=PERSON)
    p.add_argument("--yes", action="store_true", help="undo the change it names")
    add_json_flag(p)
    p.set_defaults(handler=cmd_undo)


def cmd_bulk(ctx: CommandContext) -> int:
    args = ctx.args
    action = BulkAction(args.action)
    scope = parse_enum(Scope, args.scope, "scope") if args.scope else None
    if bool(args.note) == bool(args.about):
        raise InvalidInput("Name the notes with --note, or give --about PHRASE (not both).")
    session = ctx.session(args.person)
    if args.about:
        shown = bulk_notes.about(session, args.about, action, scope)
    else:
        shown = bulk_notes.preview(session, args.note, action, scope)
    if not args.yes:
        if ctx.as_json:
            emit_json(shown.to_json() | {"applied": False})
            return 0
        emit_line(shown.sentence())
        emit_table(["id", "scope", "status", "text"], _listed(shown.notes))
        if shown.skipped:
            emit_line(f"Left alone ({len(shown.skipped)}): closed, or already so.")
        emit_line("Nothing was changed: run again with --yes to apply it.")
        return 0
    done = bulk_notes.apply(session, shown, args.reason)
    if ctx.as_json:
        emit_json(done.to_json() | {"applied": True})
    else:
        emit_line(done.sentence)
    return 0


def cmd_undo(ctx: CommandContext) -> int:
    args = ctx.args
    session = ctx.session(args.person)
    change = undo.last_change(session)
    if change is None:
        raise NotFound(
            f"There is no change by {actor_named(session.actor)} to these notes that an undo "
            "can take back (an undo itself is not undone)."
        )
    if not args.yes:
        if ctx.as_json:
            emit_json(change.to_json() | {"applied": False})
            return 0
        emit_line(f"{change.label}, made {iso(change.at)}.")
        emit_line("Nothing was changed: run again with --yes to undo it.")
        return 0
    done = undo.undo(session, change.seq)
    if ctx.as_json:
        emit_json(done.to_json() | {"applied": True})
    else:
        emit_line(f"{change.label.replace('Undo', 'Undid', 1)}; the audit log keeps both steps.")
    return 0


def _listed(notes_shown: Iterable[ListedNote]) -> list[tuple[str, ...]]:
    return [(n.id, n.scope.value, n.status.value, shorten(n.text)) for n in notes_shown]


def cmd_list(ctx: CommandContext) -> int:
    as_of = parse_time(ctx.args.as_of) if ctx.args.as_of else None
    session = ctx.session(ctx.args.person)
    views: Iterable[NoteView]
    if as_of is None:  # a page at a time: a whole person is never held at once (issue 19)
        views = stream_notes(session, include_closed=ctx.args.all)
    else:
        views = notes.list_notes(session, include_closed=ctx.args.all, as_of=as_of)
    if ctx.as_json:
        emit_json_items(v.to_json() for v in views)
        return 0
    emit_table(
        ["id", "kind", "scope", "confidence", "valid from", "valid to", "status", "text"],
        [
            (
                v.note.id,
                v.note.kind.value,
                v.note.scope.value,
                percent(v.note.confidence_bp),  # JSON keeps confidence_bp (basis points)
                iso(v.note.valid_from),
                iso(v.note.valid_to) or "",
                v.note.status.value,
                shorten(v.text),
            )
            for v in views
        ],
    )
    return 0


def cmd_show(ctx: CommandContext) -> int:
    detail = notes.show_note(ctx.session(ctx.args.person), ctx.args.note)
    if ctx.as_json:
        emit_json(detail)
        return 0
    emit_line(f"{detail['id']}  {detail['kind']}  {detail['scope']}  {detail['status']}")
    emit_line(f"  {detail['text']}")
    emit_line(f"  valid {detail['valid_from']} → {detail['valid_to'] or 'now'}")
    emit_line(f"  confidence {confidence_sentence(detail['confidence'])}")
    for source in detail["sources"]:
        emit_line(f"  source {source['conversation']} turn {source['turn'] or '-'}")
    for version in detail["versions"]:
        emit_line(f"  version {version['id']} [{version['status']}] {shorten(version['text'])}")
    emit_line(f"  used {len(detail['usage'])} times")
    return 0


def confidence_sentence(confidence: dict[str, Any]) -> str:
    """F3's arithmetic in percent, as the user guide gives it: "85% (75% + 5% × 2 = 85%)".
    The JSON keeps basis points (`confidence_bp`, `initial_bp`, …: 100 = 1%)."""
    count = len(confidence["corroborators"])
    sum_ = (
        f"{percent(confidence['initial_bp'])} + {percent(confidence['per_corroborator_bp'])} "
        f"× {count} = {percent(confidence['uncapped_bp'])}"
    )
    if confidence["uncapped_bp"] > confidence["cap_bp"]:
        sum_ += f", capped at {percent(confidence['cap_bp'])}"
    return f"{percent(confidence['confidence_bp'])} ({sum_})"


def cmd_add(ctx: CommandContext) -> int:
    a = ctx.args
    kind, scope = parse_enum(Kind, a.kind, "kind"), parse_enum(Scope, a.scope, "scope")
    note_id = notes.add_note(
        ctx.session_maybe_new(a.person),
        a.text,
        kind,
        scope,
        durability=Durability.TRANSIENT if a.transient else Durability.LASTING,
        confidence_bp=a.confidence,
        conversation=ConversationId(a.conversation) if a.conversation else None,
        topic=a.topic,
        create_person=True,
    )
    emit_json({"id": note_id}) if ctx.as_json else emit_line(note_id)
    return 0


def cmd_edit(ctx: CommandContext) -> int:
    a = ctx.args
    scope = parse_enum(Scope, a.scope, "scope") if a.scope else None
    note_id = notes.edit_note(ctx.session(a.person), a.note, text=a.text, scope=scope)
    emit_json({"id": note_id, "previous": a.note}) if ctx.as_json else emit_line(note_id)
    return 0


def cmd_delete(ctx: CommandContext) -> int:
    notes.delete_note(ctx.session(ctx.args.person), ctx.args.note, ctx.args.reason)
    if ctx.as_json:
        emit_json({"id": ctx.args.note, "status": "deleted"})
    else:
        emit_line(f"Deleted {ctx.args.note}; its record stays in the audit log.")
    return 0
