"""The tools one conversation's agent is offered, and one synchronous call to run any of
them — the part of `engram mcp` that knows Engram, not MCP.

The host fixes the attribution when it starts the server: the person always, and the
conversation when it has one; otherwise the session starts its own on the first call
that needs it (runtime/session_conversation.py). No tool call can reach another person
or conversation (H6, P3, W6). Tools offered:

- the five conversation-history tools, bound to that conversation;
- `memory_recall` (R1, R2);
- the typed memory tools the agent's configuration enables, within the host's allowance
  (P2). The configuration is read again on every call, so a tool an operator turns off
  refuses at once.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from engram.control.session import PersonSession
from engram.control.views import recall_json
from engram.model.agents import AgentConfig
from engram.model.errors import EngramError, NotAllowed, NotFound
from engram.model.ids import ConversationId, PersonId, person_id
from engram.runtime import agents, history, memory_tools
from engram.runtime.context import Attribution, assemble_turn
from engram.runtime.conversations import require_conversation
from engram.runtime.recall_tool import RECALL
from engram.runtime.session_conversation import SessionConversation
from engram.runtime.tool_calls import ToolSpec, limit_arg, run_tool
from engram.runtime.usage_writer import UsageRecorder
from engram.store.errors import OperationalError
from engram.store.store import Store

INSTRUCTIONS = (
    "Engram keeps what is remembered about the person you are talking with, for this one "
    "conversation; you cannot reach another person or conversation, and arguments naming "
    "one are ignored. Every remembered item has a scope: 'direct' and 'unspecified' items "
    "are private and reach you only when that person is the sole human reading this "
    "conversation; 'portable' items reach any audience. When others can read the "
    "conversation, recall and search say that private items are withheld, without "
    "saying whether any exist. The conversation_* tools read this conversation only. "
    "memory_recall gives the best remembered items; memory_search finds them by words; "
    "the resource engram://memory/block (and the prompt memory_block) holds them as the "
    "block assembled for this conversation. "
    "memory_remember and memory_update_item never write directly: a person reviews each "
    "suggestion first. memory_forget stops using an item; its record is kept. Which memory "
    "tools you have can change during the conversation; the tool list says what is "
    "available now."
)

KNOWN_TOOLS = frozenset([*history.SPECS, RECALL.name, *memory_tools.SPECS])


BUSY = "The store is busy with another writer, so nothing was done; try again in a moment."


@dataclass(frozen=True, slots=True)
class Bound:
    """What the host fixed when it started the server."""

    store: Store
    session: SessionConversation
    agent: str | None
    host_allows: Collection[str]
    usage: UsageRecorder | None = None  # the server's usage writer; None writes at once

    def config(self) -> AgentConfig:
        """The agent's configuration as it is saved now (P2)."""
        return agents.agent_config(self.store, self.agent)

    def offered(self) -> list[ToolSpec]:
        """Every tool this conversation's agent has right now."""
        memory = memory_tools.tool_specs(self.config(), self.host_allows)
        return [*history.TOOL_SPECS, RECALL, *memory]

    def attribution(self) -> Attribution:
        """The person and conversation a call acts for (the session's own conversation is
        started here, on the first call that needs it)."""
        return self.session.attribution()


def bind(
    store: Store,
    person: str,
    conversation: str | None,
    agent: str | None,
    host_allows: Collection[str] | None,
    *,
    usage: UsageRecorder | None = None,
) -> Bound:
    """Check the attribution once, at start: the person must be in the store, and take part
    in the host's conversation when it names one. `usage` takes the reads' usage records."""
    allowed = set(host_allows) if host_allows is not None else set(memory_tools.SPECS)
    if conversation is None:
        subject = _known_person(store, person)
        session = SessionConversation(store, subject, agent)
        return Bound(store, session, agent, allowed, usage)
    subject = person_id(person)
    info = require_conversation(store, ConversationId(conversation))
    if subject not in info.participants:
        raise NotAllowed(f"{person} is not a participant of conversation {conversation}.")
    agent = agent or info.agent
    session = SessionConversation(store, subject, agent, info.id)
    return Bound(store, session, agent, allowed, usage)


def _known_person(store: Store, person: str) -> PersonId:
    # A typo in a host's configuration, or a person erased since it was written, must not
    # quietly become a new, empty memory.
    try:
        return PersonSession.open(store, person).person
    except NotFound:
        raise NotFound(
            f"There is no person {person!r} in this store, so there is no memory to serve; "
            "the host's configuration must name someone the store holds.",
            cli_message=f"There is no person {person!r} in this store; check --person (engram "
            "persons lists who is there), or set them up with 'engram mcp config --host HOST "
            f"--person {person}'.",
        ) from None


def call(bound: Bound, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Run one tool; refusals come back as {"error": one sentence}, never as exceptions
    (except a store that fails underneath, which the caller reports)."""
    if name not in KNOWN_TOOLS:
        return {"error": f"There is no tool {name!r} here."}
    return _answered(bound, lambda: _dispatch(bound, name, arguments))


def memory_block(bound: Bound) -> str:
    """The assembled block for this session's audience, recorded in the usage ledger as a
    turn's block is (A1-A9); raises EngramError with one sentence when it cannot be had."""

    def block() -> dict[str, Any]:
        assembled = assemble_turn(
            bound.store, bound.attribution(), record_usage=True, usage=bound.usage
        )
        return {"block": assembled.block}

    answer = _answered(bound, block)
    if "error" in answer:
        raise EngramError(str(answer["error"]))
    return str(answer["block"])


def _answered(bound: Bound, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """`work`'s answer, with a deleted conversation and a busy store said in one sentence."""
    try:
        answer: dict[str, Any] = work()
    except EngramError as error:
        answer = {"error": str(error)}
    except OperationalError as error:
        if not _busy(error):
            raise
        return {"error": BUSY}
    if "error" in answer and bound.session.gone():
        return {"error": bound.session.gone_sentence()}
    return answer


def _busy(error: OperationalError) -> bool:
    text = str(error.orig).lower()
    return "locked" in text or "busy" in text


def _dispatch(bound: Bound, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    attribution = bound.attribution()
    if name in history.SPECS:
        return history.dispatch(bound.store, attribution.conversation, name, arguments)
    if name == RECALL.name:
        return run_tool(arguments, lambda args: _recall(bound, attribution, args), RECALL)
    config = bound.config()  # again, inside the call: a tool turned off refuses now
    return memory_tools.dispatch(
        bound.store, attribution, config, bound.host_allows, name, arguments, bound.usage
    )


def _recall(bound: Bound, attribution: Attribution, args: dict[str, Any]) -> dict[str, Any]:
    result = memory_tools.recall_for_turn(
        bound.store,
        attribution,
        bound.config(),
        bound.host_allows,
        limit=limit_arg(args),
        record_usage=True,
        usage=bound.usage,
    )
    return recall_json(result)
