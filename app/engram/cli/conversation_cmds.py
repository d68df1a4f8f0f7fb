"""Conversations, turn assembly and recall: `conversation …`, `conversations list`,
`assemble`, `recall`."""

from __future__ import annotations

import json
from typing import Any

from engram.cli.argument_help import CONVERSATION, PERSON
from engram.cli.context import CommandContext
from engram.cli.output import add_json_flag, emit_json, emit_line, emit_table
from engram.control import conversations as conversation_control
from engram.control import views
from engram.control.cascade_preview import NONE, CascadePreview
from engram.control.session import check_session_actor
from engram.engine import history_search
from engram.engine import recall as recall_rules
from engram.model.conversation import Surface, TurnStatus
from engram.model.errors import InvalidInput
from engram.model.ids import ConversationId, person_id
from engram.model.scope import parse_enum
from engram.model.wire import WireError, strict_json
from engram.runtime import context as turn_context
from engram.runtime import conversations, history, memory_tools

CALL = "the tool call's id (printed by `conversation tool`, or in a `conversation find` match)"


def register(commands: Any) -> None:
    """Add conversation commands, assemble and recall."""
    group = commands.add_parser("conversation", help="one conversation")
    actions = group.add_subparsers(dest="conversation_command", metavar="ACTION")
    actions.required = True

    p = actions.add_parser("start", help="start a conversation; prints its id")
    p.add_argument("--participants", required=True, help="P[,P…]: everyone who can read it")
    p.add_argument(
        "--agent",
        help="the agent taking part; its memory settings apply (see `engram agents list`)",
    )
    p.add_argument("--incognito", action="store_true", help="learn nothing from this conversation")
    p.add_argument("--surface", default="chat", help="chat, channel, task or schedule")
    add_json_flag(p)
    p.set_defaults(handler=cmd_start)

    p = actions.add_parser("append", help="append a turn; prints its turn id")
    p.add_argument("conversation", help=CONVERSATION)
    p.add_argument(
        "--role",
        required=True,
        choices=["user", "assistant"],
        help="user for a participant's turn, assistant for the agent's reply",
    )
    p.add_argument(
        "--author",
        required=True,
        help="who wrote it: a participant's id for a user turn, the agent's name otherwise",
    )
    p.add_argument(
        "--text",
        required=True,
        help=f"what was said (at most {conversations.MAX_TURN_CHARS:,} characters)",
    )
    p.add_argument(
        "--status",
        default="committed",
        choices=[s.value for s in TurnStatus],
        help="committed (the default); failed or cancelled for a reply that did not finish",
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_append)

    p = actions.add_parser(
        "complete",
        help="mark the exchange so far complete, for a host that logs no replies (P4)",
    )
    p.add_argument("conversation", help=CONVERSATION)
    p.set_defaults(handler=cmd_complete)

    p = actions.add_parser(
        "delete",
        help="delete a conversation (preview with --preview); a shared one is deleted for "
        "--person only, unless staff add --for-everyone",
    )
    p.add_argument("conversation", help=CONVERSATION)
    p.add_argument(
        "--person",
        required=True,
        help="whose part is deleted: one of its participants (their turns are excised from a "
        "shared conversation, their notes from it closed; the others keep it)",
    )
    p.add_argument("--preview", action="store_true", help="show what would close; change nothing")
    p.add_argument(
        "--for-everyone",
        action="store_true",
        help="delete it for every participant (support staff only, with --actor staff:ID); "
        "the preview names each person and what closes for them",
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_delete)

    p = actions.add_parser("tool", help="record a tool call and its result; prints the call id")
    p.add_argument("conversation", help=CONVERSATION)
    p.add_argument("--name", required=True, help="the tool's name, e.g. weather")
    p.add_argument("--args", required=True, help="the call's arguments (JSON)")
    p.add_argument(
        "--result",
        required=True,
        help=f"what the tool returned, as text (at most {conversations.MAX_TURN_CHARS:,} "
        "characters)",
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_tool)

    p = actions.add_parser(
        "find", help="search a conversation's turns and tool results for words or a pattern"
    )
    p.add_argument("conversation", help=CONVERSATION)
    p.add_argument(
        "query",
        help="words to find; with --mode pattern, literal text or an RE2 regular "
        f"expression (at most {history.MAX_QUERY_CHARS} characters)",
    )
    p.add_argument(
        "--mode",
        default="relevance",
        choices=["relevance", "pattern"],
        help="relevance: the messages sharing most of the words, best first; pattern: the "
        "messages that contain the text or match the expression, newest first",
    )
    p.add_argument(
        "--limit",
        type=int,
        help=f"how many matches to show: {history_search.DEFAULT_LIMIT} by default, "
        f"{history_search.MAX_LIMIT} at most",
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_history, tool="conversation_find")

    p = actions.add_parser("read-turn", help="one turn's text (a long turn with its middle cut)")
    p.add_argument("conversation", help=CONVERSATION)
    p.add_argument(
        "turn_id",
        help="the turn's id (printed by `conversation append`, or in a `conversation find` match)",
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_history, tool="conversation_read_turn")

    p = actions.add_parser("read-tool-result", help="what a recorded tool call returned")
    p.add_argument("conversation", help=CONVERSATION)
    p.add_argument("call_id", help=CALL)
    add_json_flag(p)
    p.set_defaults(handler=cmd_history, tool="conversation_read_tool_result")

    p = actions.add_parser("excise", help="remove a tool result's content (administrators)")
    p.add_argument("conversation", help=CONVERSATION)
    p.add_argument("call_id", help=CALL)
    p.add_argument(
        "--reason", required=True, help="why it is removed, kept in the conversation's log"
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_excise)

    group = commands.add_parser("conversations", help="a person's conversations")
    actions = group.add_subparsers(dest="conversations_command", metavar="ACTION")
    actions.required = True
    p = actions.add_parser("list", help="every conversation a person takes part in")
    p.add_argument("--person", required=True, help=PERSON)
    add_json_flag(p)
    p.set_defaults(handler=cmd_list)

    for name, handler, text in (
        ("assemble", cmd_assemble, "the memory block the agent's next turn here would get"),
        ("recall", cmd_recall, "the notes the agent's recall tool would get here"),
    ):
        p = commands.add_parser(name, help=text)
        p.add_argument("--person", required=True, help="whom the agent answers: " + PERSON)
        p.add_argument("--conversation", required=True, help=CONVERSATION)
        if name == "recall":
            p.add_argument(
                "--limit",
                type=int,
                help=f"how many notes: {recall_rules.DEFAULT_LIMIT} by default, "
                f"{recall_rules.MAX_LIMIT} at most",
            )
        add_json_flag(p)
        p.set_defaults(handler=handler)


def _attribution(ctx: CommandContext) -> turn_context.Attribution:
    ctx.session(ctx.args.person)  # resolves the person (NotFound if unknown)
    return turn_context.Attribution(
        person_id(ctx.args.person), ConversationId(ctx.args.conversation)
    )


def cmd_start(ctx: CommandContext) -> int:
    a = ctx.args
    people = [person_id(p.strip()) for p in a.participants.split(",") if p.strip()]
    info = conversations.start_conversation(
        ctx.store(),
        people,
        surface=parse_enum(Surface, a.surface, "surface"),
        incognito=a.incognito,
        agent=a.agent,
    )
    emit_json({"id": info.id}) if ctx.as_json else emit_line(info.id)
    return 0


def cmd_append(ctx: CommandContext) -> int:
    a = ctx.args
    turn = conversations.append_turn(
        ctx.store(),
        ConversationId(a.conversation),
        role=a.role,
        author=a.author,
        text=a.text,
        status=parse_enum(TurnStatus, a.status, "status"),
    )
    emit_json({"turn": turn}) if ctx.as_json else emit_line(turn)
    return 0


def cmd_complete(ctx: CommandContext) -> int:
    if conversations.complete_exchange(ctx.store(), ConversationId(ctx.args.conversation)):
        emit_line("The exchange is complete; learning may now read its turns.")
    else:
        emit_line("No exchange was waiting for a reply, so nothing was marked.")
    return 0


def cmd_delete(ctx: CommandContext) -> int:
    session = ctx.session(ctx.args.person)
    conversation = ConversationId(ctx.args.conversation)
    everyone = ctx.args.for_everyone
    if ctx.args.preview:
        result = conversation_control.preview_delete(session, conversation, for_everyone=everyone)
    else:
        result = conversation_control.delete_conversation(
            session, conversation, for_everyone=everyone
        )
    if ctx.as_json:
        emit_json(result.to_json())
        return 0
    emit_cascade(result.preview)
    return 0


def emit_cascade(preview: CascadePreview) -> None:
    """The control layer's preview as it is, sentence for sentence; ids beside the words."""
    emit_line(preview.sentence)
    for person in preview.people:
        indent = "  " if preview.by_person else ""
        if preview.by_person:
            emit_line(f" {person.heading}")
        for section in person.sections:
            emit_line(f"{indent} {section.heading}")
            for line in section.lines:
                emit_line(f"{indent}  {line.item}  {line.words} {line.reason}")
            if not section.lines:
                emit_line(f"{indent}  {NONE}")
    if preview.others_sentence:
        emit_line(preview.others_sentence)


def cmd_list(ctx: CommandContext) -> int:
    session = ctx.session(ctx.args.person)
    infos = conversations.conversations_of(session.store, session.person)
    rows = [views.conversation_json(i, session.person) for i in infos]
    if ctx.as_json:
        emit_json(rows)
    else:
        emit_table(
            ["id", "created", "surface", "incognito", "participants"],
            [
                (
                    r["id"],
                    r["created_at"],
                    r["surface"],
                    "yes" if r["incognito"] else "",
                    ",".join(r["participants"]),
                )
                for r in rows
            ],
        )
    return 0


def cmd_assemble(ctx: CommandContext) -> int:
    block = turn_context.assemble_turn(ctx.store(), _attribution(ctx))
    if ctx.as_json:
        emit_json(views.assembled_json(block))
    else:
        emit_line(block.block or "(empty: nothing to add for this audience)")
        emit_line(f"-- {block.used} of {block.budget} characters; {len(block.dropped)} dropped")
    return 0


def cmd_recall(ctx: CommandContext) -> int:
    attribution = _attribution(ctx)
    store = ctx.store()
    config = memory_tools.conversation_agent(store, attribution.conversation)
    result = memory_tools.recall_for_turn(store, attribution, config, limit=ctx.args.limit)
    if ctx.as_json:
        emit_json(views.recall_json(result))
    else:
        if result.message:
            emit_line(result.message)
        for item in result.notes:
            emit_line(f"- {item.text}")
        for line in result.digest:
            emit_line(f"~ {line}")
    return 0


def cmd_tool(ctx: CommandContext) -> int:
    a = ctx.args
    try:
        strict_json(a.args)
    except WireError as error:
        raise InvalidInput(f"--args must be JSON, and it holds {error}.") from None
    except (ValueError, RecursionError):
        raise InvalidInput('--args must be JSON, e.g. \'{"city": "Oslo"}\'.') from None
    call = conversations.record_tool_call(
        ctx.store(),
        ConversationId(a.conversation),
        name=a.name,
        arguments=a.args,
        result=a.result,
    )
    emit_json({"call_id": call}) if ctx.as_json else emit_line(call)
    return 0


def cmd_history(ctx: CommandContext) -> int:
    a = ctx.args
    arguments = {
        key: getattr(a, key)
        for key in ("query", "mode", "limit", "turn_id", "call_id")
        if getattr(a, key, None) is not None
    }
    answer = history.dispatch(ctx.store(), ConversationId(a.conversation), a.tool, arguments)
    if "error" in answer:
        raise InvalidInput(answer["error"])  # the tool's own one-sentence error
    emit_json(answer) if ctx.as_json else emit_line(
        json.dumps(answer, indent=2, ensure_ascii=False)
    )
    return 0


def cmd_excise(ctx: CommandContext) -> int:
    a = ctx.args
    conversations.excise_tool_result(
        ctx.store(),
        ConversationId(a.conversation),
        a.call_id,
        actor=check_session_actor(a.actor, None) if a.actor else "admin",
        reason=a.reason,
    )
    if ctx.as_json:
        emit_json({"call_id": a.call_id, "removed": True})
    else:
        emit_line(f"Removed the result of {a.call_id}; the log records who, when and why.")
    return 0
