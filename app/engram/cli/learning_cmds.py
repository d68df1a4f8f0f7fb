"""`engram agents …`, `learn`, `maintain` and `candidates …`: learning, upkeep, review."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from engram.cli.argument_help import AGENT, CANDIDATE, PERSON, PERSON_MAYBE_NEW
from engram.cli.context import CommandContext
from engram.cli.output import add_json_flag, emit_json, emit_line, emit_table, shorten
from engram.cli.progress import progress_bar
from engram.control import candidates
from engram.control.wording import counted, verb
from engram.engine.extraction import Extractor
from engram.engine.rule_extractor import RuleExtractor
from engram.model.agents import auto_apply_sentence
from engram.model.clock import parse_time
from engram.model.errors import InvalidInput
from engram.model.ids import PersonId
from engram.runtime import agents, digests, extraction, legacy_import, maintenance
from engram.runtime.openai_extractor import OpenAIExtractor

MAX_CONFIG_KIB = 64
MAX_CONFIG_BYTES = MAX_CONFIG_KIB * 1024
REVISION = (
    "the candidate's revision you reviewed, shown by `candidates get` (the number after r); "
    "if the candidate changed since, nothing is decided"
)


def register(commands: Any) -> None:
    """Add `agents`, `learn` and `candidates`."""
    group = commands.add_parser("agents", help="each agent's memory settings")
    actions = group.add_subparsers(dest="agents_command", metavar="ACTION")
    actions.required = True
    p = actions.add_parser("set", help="set an agent's memory configuration from a JSON file")
    p.add_argument(
        "name",
        help="the agent's name, as `conversation start --agent` gives it: letters, digits "
        "and . _ : -",
    )
    p.add_argument(
        "--config",
        required=True,
        metavar="FILE.json",
        help=f"a JSON file with the agent's memory settings (at most {MAX_CONFIG_KIB} KiB; "
        "see docs/integration-guide.md)",
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_agents_set)
    p = actions.add_parser("list", help="every configured agent")
    add_json_flag(p)
    p.set_defaults(handler=cmd_agents_list)
    p = actions.add_parser(
        "show", help="one agent's settings, and which sensitive facts it may apply unreviewed"
    )
    p.add_argument("name", help=AGENT)
    add_json_flag(p)
    p.set_defaults(handler=cmd_agents_show)
    p = actions.add_parser("history", help="every configuration an agent has had, and who set it")
    p.add_argument("name", help=AGENT)
    add_json_flag(p)
    p.set_defaults(handler=cmd_agents_history)

    p = commands.add_parser("learn", help="learn notes now from turns not analysed yet")
    p.add_argument("--person", help="only this person (default: everyone)")
    add_extractor_options(p)
    add_json_flag(p)
    p.set_defaults(handler=cmd_learn)

    p = commands.add_parser(
        "maintain", help="retire expired notes, remove duplicates, rebuild each person's profile"
    )
    p.add_argument("--now", metavar="ISO-TIME", help="decide what has expired as of this moment")
    add_json_flag(p)
    p.set_defaults(handler=cmd_maintain)

    group = commands.add_parser("candidates", help="review the notes learning suggested")
    actions = group.add_subparsers(dest="candidates_command", metavar="ACTION")
    actions.required = True
    p = actions.add_parser("list", help="a person's candidates")
    p.add_argument("--person", required=True, help=PERSON)
    p.add_argument(
        "--status", choices=candidates.STATUSES, help="only candidates in this state (default: all)"
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_list)
    for name, helptext, handler in (
        ("get", "one candidate: its text, status and revision", cmd_get),
        ("audit", "every decision about a candidate", cmd_audit),
        ("apply", "turn an approved candidate into a note", cmd_apply),
    ):
        p = actions.add_parser(name, help=helptext)
        p.add_argument("id", help=CANDIDATE)
        p.add_argument("--person", required=True, help=PERSON)
        add_json_flag(p)
        p.set_defaults(handler=handler)
    p = actions.add_parser(
        "import-legacy", help="a legacy memory.md file, as candidates for review"
    )
    p.add_argument("file", help="the memory.md file (UTF-8 text)")
    p.add_argument("--person", required=True, help="whose memory it is: " + PERSON_MAYBE_NEW)
    add_json_flag(p)
    p.set_defaults(handler=cmd_import_legacy)
    p = actions.add_parser("approve", help="approve the revision you saw")
    p.add_argument("id", help=CANDIDATE)
    p.add_argument("--person", required=True, help=PERSON)
    p.add_argument("--revision", type=int, required=True, help=REVISION)
    p.add_argument("--apply", action="store_true", help="apply it right after")
    add_json_flag(p)
    p.set_defaults(handler=cmd_approve)
    p = actions.add_parser("reject", help="reject the revision you saw, saying why")
    p.add_argument("id", help=CANDIDATE)
    p.add_argument("--person", required=True, help=PERSON)
    p.add_argument("--revision", type=int, required=True, help=REVISION)
    p.add_argument(
        "--reason",
        required=True,
        help=f"why, kept in the candidate's audit trail (at most "
        f"{candidates.MAX_REASON_CHARS:,} characters)",
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_reject)


def cmd_agents_set(ctx: CommandContext) -> int:
    path = Path(ctx.args.config)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise InvalidInput(f"Cannot read {path}: {error.strerror}.") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise InvalidInput(f"{path} is larger than a configuration can be ({MAX_CONFIG_KIB} KiB).")
    actor = ctx.args.actor or "operator"
    config = agents.set_agent_from_file(ctx.store(), ctx.args.name, raw, actor, str(path))
    if ctx.as_json:
        emit_json({"name": config.name, **config.to_json()})
    else:
        emit_line(f"Agent {config.name}: learning {config.learning.mode.value}.")
    return 0


def _tools_on(config: dict[str, Any]) -> str:
    return ", ".join(k for k, v in config["memory"]["tools"].items() if v is True) or "none"


def cmd_agents_list(ctx: CommandContext) -> int:
    rows = agents.list_agents(ctx.store())
    if ctx.as_json:
        emit_json(rows)
        return 0
    emit_table(
        ["agent", "learning", "tools", "set at", "by"],
        [
            (
                r["name"],
                r["memory"]["learning"]["mode"],
                _tools_on(r),
                r["updated_at"],
                r["updated_by"],
            )
            for r in rows
        ],
    )
    return 0


def add_extractor_options(p: Any) -> None:
    """--extractor, --endpoint and --model: what learning asks for notes (`learn`, `serve`)."""
    p.add_argument(
        "--extractor",
        choices=["rules", "openai"],
        default="rules",
        help="rules: the offline rule extractor (default); openai: an OpenAI-compatible "
        "chat endpoint (--endpoint, --model; key from ENGRAM_EXTRACTOR_API_KEY)",
    )
    p.add_argument("--endpoint", metavar="URL", help="e.g. http://127.0.0.1:11434/v1")
    p.add_argument("--model", help="the model name the endpoint serves")


def chosen_extractor(ctx: CommandContext) -> Extractor:
    """The extractor the command's options name."""
    if ctx.args.extractor == "rules":
        return RuleExtractor()
    if not ctx.args.endpoint or not ctx.args.model:
        raise InvalidInput("--extractor openai needs --endpoint URL and --model NAME.")
    return OpenAIExtractor(
        ctx.args.endpoint, ctx.args.model, os.environ.get("ENGRAM_EXTRACTOR_API_KEY")
    )


def cmd_agents_show(ctx: CommandContext) -> int:
    config = agents.require_agent(ctx.store(), ctx.args.name)
    policy = auto_apply_sentence(config)
    if ctx.as_json:
        emit_json({"name": config.name, **config.to_json(), "sensitive": policy})
        return 0
    learning = config.learning
    emit_line(f"Agent {config.name}: learning {learning.mode.value}")
    emit_line(f"  learns on: {', '.join(sorted(learning.surfaces)) or 'nothing'}")
    emit_line(f"  kinds: {', '.join(sorted(learning.kinds))}")
    emit_line(f"  tools: {', '.join(sorted(config.tools.enabled)) or 'none'}")
    emit_line(f"  {policy}")
    return 0


def cmd_agents_history(ctx: CommandContext) -> int:
    rows = agents.agent_history(ctx.store(), ctx.args.name)
    if ctx.as_json:
        emit_json(rows)
        return 0
    emit_table(
        ["set at", "by", "learning", "tools"],
        [
            (
                r["at"],
                r["by"],
                r["memory"]["learning"]["mode"],
                _tools_on(r),
            )
            for r in rows
        ],
    )
    return 0


def cmd_learn(ctx: CommandContext) -> int:
    extractor = chosen_extractor(ctx)
    store = ctx.store()
    persons: list[PersonId] | None = None
    with progress_bar(ctx, "Learning") as progress:
        if ctx.args.person:
            session = ctx.session(ctx.args.person)  # checks the person exists
            persons = [PersonId(session.person)]
            reports = extraction.learn_person(store, persons[0], extractor, progress=progress)
            lines = digests.write_digests(store, persons[0], extractor, quiet_after=None)
        else:
            reports = extraction.learn_all(store, extractor, progress=progress)
            lines = digests.write_all_digests(store, extractor, quiet_after=None)
    failed = [r.error for r in reports if r.error] + [d.error for d in lines if d.error]
    alone = extraction.left_alone(store, persons)
    message = _nothing_learned(alone) if not reports else None
    if ctx.as_json:
        emit_json(
            {
                "passes": [r.to_json() for r in reports],
                "not_learned": [a.to_json() for a in alone],
                "digests": [d.to_json() for d in lines],  # M4: one line per conversation
                **({"message": message} if message else {}),
            }
        )
    else:
        for d in lines:
            done = "digest line written" if d.written else f"no digest line: {d.error or d.skipped}"
            emit_line(f"{d.person} in {d.conversation}: {done}")
        if message:
            emit_line(message)
        for a in alone:
            emit_line(
                f"{a.person} in {a.conversation}: {counted(a.turns, 'turn')} left alone: {a.reason}"
            )
        for r in reports:
            outcome = (
                r.error
                or r.skipped
                or (
                    f"{counted(len(r.turns), 'turn')}: {counted(len(r.applied), 'note')} "
                    f"written, {counted(len(r.suggested), 'candidate')} to review"
                )
            )
            emit_line(f"{r.person} in {r.conversation}: {outcome}")
    if failed:
        passes = counted(len(failed), "pass", "passes")
        print(f"engram: {passes} failed; first: {failed[0]}", file=sys.stderr)
        return 1
    return 0


def _nothing_learned(alone: list[extraction.LeftAlone]) -> str:
    """Why a run of `engram learn` learned nothing, in one sentence."""
    if not alone:
        return "Nothing to learn: every committed turn has been analysed already."
    return (
        f"Nothing to learn: {counted(len(alone), 'conversation')} "
        f"{verb(len(alone), 'has', 'have')} turns not analysed yet, and "
        "learning leaves each of them alone for the reason given."
    )


def cmd_maintain(ctx: CommandContext) -> int:
    # --now moves the decisions (what has expired), never the journal's clock: events keep
    # the real time, so nothing written later is dated before it.
    now = parse_time(ctx.args.now) if ctx.args.now else None
    store = ctx.store()
    with progress_bar(ctx, "Maintaining") as progress:
        reports = maintenance.maintain_all(store, now, progress)
    if ctx.as_json:
        emit_json({"persons": reports})
        return 0
    for r in reports:
        emit_line(
            f"{r['person']}: {len(r['retired'])} retired, "
            f"{counted(len(r['duplicates_removed']), 'duplicate')} removed, "
            f"profile {'rebuilt' if r['profile_rebuilt'] else 'unchanged'}"
        )
    return 0


def _print(ctx: CommandContext, candidate: dict[str, Any]) -> int:
    if ctx.as_json:
        emit_json(candidate)
    else:
        emit_line(
            f"{candidate['id']} r{candidate['revision']} {candidate['status']}: "
            f"{candidate['text'] or '(text gone)'}"
        )
    return 0


def cmd_list(ctx: CommandContext) -> int:
    rows = candidates.list_candidates(ctx.session(ctx.args.person), ctx.args.status)
    if ctx.as_json:
        emit_json(rows)
        return 0
    emit_table(
        ["id", "rev", "status", "kind", "flags", "text"],
        [
            (
                c["id"],
                c["revision"],
                c["status"],
                c["kind"],
                " ".join(
                    f"sensitive:{c['category']}" if f == "sensitive" and c["category"] else f
                    for f in ("sensitive", "ambiguous")
                    if c[f]
                ),
                shorten(c["text"]),
            )
            for c in rows
        ],
    )
    return 0


def cmd_import_legacy(ctx: CommandContext) -> int:
    path = Path(ctx.args.file)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidInput(f"Cannot read {path} as UTF-8 text ({error}).") from None
    session = ctx.session_maybe_new(ctx.args.person)
    made = legacy_import.import_legacy(
        ctx.store(), session.person, text, session.actor, create_person=True
    )
    if ctx.as_json:
        emit_json({"candidates": made})
    else:
        emit_line(f"{counted(len(made), 'candidate')} to review for {session.person}.")
    return 0


def cmd_get(ctx: CommandContext) -> int:
    return _print(ctx, candidates.get_candidate(ctx.session(ctx.args.person), ctx.args.id))


def cmd_audit(ctx: CommandContext) -> int:
    trail = candidates.audit(ctx.session(ctx.args.person), ctx.args.id)
    if ctx.as_json:
        emit_json(trail)
        return 0
    emit_table(
        ["at", "actor", "event", "decision", "reason"],
        [
            (t["at"], t["actor"], t["event"], t.get("decision", ""), shorten(t.get("reason")))
            for t in trail
        ],
    )
    return 0


def cmd_approve(ctx: CommandContext) -> int:
    session = ctx.session(ctx.args.person)
    done = candidates.approve(session, ctx.args.id, ctx.args.revision, apply_now=ctx.args.apply)
    return _print(ctx, done)


def cmd_reject(ctx: CommandContext) -> int:
    session = ctx.session(ctx.args.person)
    return _print(ctx, candidates.reject(session, ctx.args.id, ctx.args.revision, ctx.args.reason))


def cmd_apply(ctx: CommandContext) -> int:
    return _print(ctx, candidates.apply(ctx.session(ctx.args.person), ctx.args.id))
