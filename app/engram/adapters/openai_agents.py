"""Engram as the memory of an OpenAI Agents SDK agent (`pip install engram-inspector[agents]`).

`EngramSession` is an Agents SDK `Session` whose items live in Engram's signed conversation
log, and the one place an agent's memory is bound to a person and a conversation:

- `get_items` / `add_items` / `pop_item` / `clear_session`: the SDK's session protocol
  (runtime/session_log.py). Each item's visible text is a turn or tool entry like any other,
  so history search, learning and the inspector see it; the rest of the item is sealed
  beside it, so the SDK gets back exactly what it gave. `pop_item` is an excision (the log
  is append-only and signed). `clear_session` starts a new conversation for the session
  and leaves the old one whole in the person's history: removing what was said is the
  person's decision, with the cascade preview (`engram conversation delete`, the
  inspector), not a side effect of an agent starting over. `session_id` is the current
  conversation's id, so a host resumes it with `EngramSession.resume`.
- `instructions(base)`: a dynamic `instructions` callable giving the agent its base
  prompt and the assembled memory block (A1-A9), assembled once per user turn and recorded
  in the usage ledger like any real turn's.
- `tools()`: the same tools `engram mcp` offers: the five history tools, `memory_recall`
  and the memory tools the agent's configuration enables within the host's allowance (P2),
  re-checked on every step, so a tool an operator turns off disappears at once.
- `after_run(result)`: once `Runner.run` has returned a completed run (its turns are
  committed), hands the conversation to a `LearningWorker`; returns at once (W2, P4).

The person is the host's trusted identity, given when the session is made; nothing in an
item, a tool argument or the model's output can choose another (P3, W6).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Collection
from typing import Any

try:
    from agents import Agent, FunctionTool, RunContextWrapper, SessionSettings
    from agents.items import TResponseInputItem
    from agents.tool_context import ToolContext
except ImportError:  # pragma: no cover - exercised by tests/unit/test_adapters_optional.py
    raise ImportError(
        "The OpenAI Agents SDK adapter needs the 'agents' extra: "
        "pip install 'engram-inspector[agents]'."
    ) from None

from engram.control.views import recall_json
from engram.model.conversation import ConversationInfo, Surface
from engram.model.errors import NotAllowed
from engram.model.ids import ConversationId, PersonId, TurnId, person_id
from engram.runtime import history, memory_tools, session_log
from engram.runtime.agents import agent_config
from engram.runtime.context import Attribution, assemble_turn
from engram.runtime.conversations import require_conversation, start_conversation
from engram.runtime.learning_worker import LearningWorker
from engram.runtime.recall_tool import RECALL
from engram.runtime.tool_calls import ToolSpec, limit_arg, run_tool
from engram.store.store import Store

Instructions = str | Callable[[RunContextWrapper[Any], Agent[Any]], Any]
POP_REASON = "taken back by the agent's session (pop_item)"


class EngramSession:
    """An Agents SDK session over one of a person's conversations in an Engram store."""

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        store: Store,
        person: str,
        conversation: str,
        *,
        agent: str,
        learning: LearningWorker | None = None,
        host_allows: Collection[str] | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        subject = person_id(person)
        info = require_conversation(store, ConversationId(conversation))
        if subject not in info.participants:
            raise NotAllowed(f"{person} is not a participant of conversation {conversation}.")
        self.store = store
        self.person: PersonId = subject
        self.agent = agent
        self.learning = learning
        self.host_allows = set(memory_tools.SPECS if host_allows is None else host_allows)
        self.session_settings = session_settings
        self._info = info
        self._party = session_log.SessionParty(subject, agent)
        self._block: tuple[ConversationId, TurnId | None, str] | None = None

    @classmethod
    def start(
        cls,
        store: Store,
        person: str,
        *,
        agent: str,
        others: Collection[str] = (),
        surface: Surface = Surface.CHAT,
        incognito: bool = False,
        learning: LearningWorker | None = None,
        host_allows: Collection[str] | None = None,
    ) -> EngramSession:
        """A session on a new conversation of `person` (and `others`, who can read it: S3)."""
        people = [person_id(person), *(person_id(p) for p in others)]
        info = start_conversation(store, people, surface=surface, incognito=incognito, agent=agent)
        return cls(store, person, info.id, agent=agent, learning=learning, host_allows=host_allows)

    @classmethod
    def resume(
        cls,
        store: Store,
        person: str,
        session_id: str,
        *,
        agent: str,
        learning: LearningWorker | None = None,
        host_allows: Collection[str] | None = None,
    ) -> EngramSession:
        """The session on an existing conversation (its `session_id`); `person` must take
        part in it."""
        return cls(
            store, person, session_id, agent=agent, learning=learning, host_allows=host_allows
        )

    @property
    def session_id(self) -> str:
        """The conversation the session is on now (it changes when the session is cleared)."""
        return self._info.id

    @property
    def conversation(self) -> ConversationInfo:
        """The conversation's facts (participants, surface, agent, incognito)."""
        return self._info

    # -- the SDK's session protocol ---------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The conversation's items, oldest first; with `limit`, the latest that many."""
        items = await asyncio.to_thread(session_log.read_items, self.store, self._info.id, limit)
        return [_as_input(item) for item in items]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Record new items in the signed log, all or nothing."""
        given = [dict(item) for item in items]
        await asyncio.to_thread(
            session_log.append_items, self.store, self._info.id, self._party, given
        )

    async def pop_item(self) -> TResponseInputItem | None:
        """Take back the latest item (an excision: its text is gone, the record stays)."""
        item = await asyncio.to_thread(
            session_log.withdraw_last,
            self.store,
            self._info.id,
            f"agent:{self.agent}",
            POP_REASON,
        )
        return _as_input(item) if item is not None else None

    async def clear_session(self) -> None:
        """Start over on a new conversation with the same people; the old one is kept."""
        self._info = await asyncio.to_thread(session_log.fresh_conversation, self.store, self._info)
        self._block = None

    # -- memory for the agent ---------------------------------------------------------------

    def instructions(self, base: Instructions = "") -> Callable[..., Awaitable[str]]:
        """An `instructions` callable for an Agent: `base` (text, or the SDK's own kind of
        callable) followed by this turn's memory block."""

        async def with_memory(context: RunContextWrapper[Any], agent: Agent[Any]) -> str:
            text = base(context, agent) if callable(base) else base
            if inspect.isawaitable(text):
                text = await text
            block = await asyncio.to_thread(self.memory_block)
            return "\n\n".join(part for part in (str(text), block) if part)

        return with_memory

    def memory_block(self) -> str:
        """The block for the conversation's latest user turn, assembled and recorded in the
        usage ledger once per turn; later steps of the same run get the same block."""
        conversation = self._info.id
        turn = session_log.last_user_turn(self.store, conversation)
        if self._block is not None and self._block[:2] == (conversation, turn):
            return self._block[2]
        who = Attribution(self.person, conversation, turn)
        block = assemble_turn(self.store, who, record_usage=True).block
        self._block = (conversation, turn, block)
        return block

    def tools(self) -> list[FunctionTool]:
        """Function tools for everything `engram mcp` would offer this agent; each is enabled
        only while the agent's configuration and the host allow it (P2)."""
        specs = [*history.TOOL_SPECS, RECALL, *memory_tools.SPECS.values()]
        return [self._tool(spec) for spec in specs]

    def offered(self) -> list[str]:
        """The names of the tools the agent has right now."""
        config = agent_config(self.store, self.agent)
        memory = [s.name for s in memory_tools.tool_specs(config, self.host_allows)]
        return [*history.SPECS, RECALL.name, *memory]

    def call_tool(self, name: str, arguments: str) -> dict[str, Any]:
        """Run one tool for this session's person and conversation (never another: H6, P3,
        W6); a refusal comes back as {"error": one sentence}."""
        if name not in self.offered():
            return {"error": f"The tool {name!r} is not available to this agent."}
        who = self._attribution()
        if name in history.SPECS:
            return history.dispatch(self.store, who.conversation, name, arguments)
        if name == RECALL.name:
            return run_tool(arguments, lambda args: self._recall(who, args), RECALL)
        config = agent_config(self.store, self.agent)  # again: a tool turned off refuses now
        return memory_tools.dispatch(self.store, who, config, self.host_allows, name, arguments)

    def _attribution(self) -> Attribution:
        conversation = self._info.id
        return Attribution(
            self.person, conversation, session_log.last_user_turn(self.store, conversation)
        )

    def _recall(self, who: Attribution, args: dict[str, Any]) -> dict[str, Any]:
        result = memory_tools.recall_for_turn(
            self.store,
            who,
            agent_config(self.store, self.agent),
            self.host_allows,
            limit=limit_arg(args),
            record_usage=True,
        )
        return recall_json(result)

    def _tool(self, spec: ToolSpec) -> FunctionTool:
        async def invoke(_context: ToolContext[Any], arguments: str) -> str:
            answer = await asyncio.to_thread(self.call_tool, spec.name, arguments)
            return json.dumps(answer, ensure_ascii=False)

        async def enabled(_context: RunContextWrapper[Any], _agent: Any) -> bool:
            return spec.name in await asyncio.to_thread(self.offered)

        return FunctionTool(
            name=spec.name,
            description=spec.description,
            params_json_schema=spec.input_schema,
            on_invoke_tool=invoke,
            strict_json_schema=False,  # optional arguments (limit, mode) stay optional
            is_enabled=enabled,
        )

    # -- learning ---------------------------------------------------------------------------

    def after_run(self, result: Any) -> bool:
        """After `Runner.run` returned: queue learning for the turns this run committed and
        return at once (W2). A run that stopped for a tool approval, or a stream not yet
        finished, is not a completed turn and teaches nothing yet (P4): False."""
        if self.learning is None:
            raise NotAllowed(
                "This session has no learning worker; give EngramSession a LearningWorker "
                "(learning=...) to learn after each run."
            )
        if getattr(result, "interruptions", None) or getattr(result, "is_complete", True) is False:
            return False
        self.learning.after_turn(require_conversation(self.store, self._info.id))
        return True


def _as_input(item: dict[str, Any]) -> TResponseInputItem:
    # The SDK's input items are TypedDicts over exactly this JSON.
    return item  # type: ignore[return-value]
