"""The conversation routes' operations — framework-neutral and thin over runtime/ and
control/, like routes.py; conversation_app.py maps HTTP onto them.

    POST   …/conversations                                   {participants?, surface?, incognito?}
    GET    …/conversations
    GET    …/conversations/{c}                               ?after=&limit=
    DELETE …/conversations/{c}
    GET    …/conversations/{c}/deletion-preview
    POST   …/conversations/{c}/turns                         {role, text, status?}
    POST   …/conversations/{c}/tool-calls                    {name, arguments?, result, status?}
    POST   …/conversations/{c}/find             conversation_find {query, mode?, limit?}
    GET    …/conversations/{c}/turns/{turn}                  conversation_read_turn
    GET    …/conversations/{c}/tool-calls/{call}/result      conversation_read_tool_result
    GET    …/conversations/{c}/turns                         conversation_recent_turns ?limit=
    GET    …/conversations/{c}/tool-calls                    conversation_list_tool_calls

(… is /v1/memory/agents/{agent}/memory.) A conversation belongs to the agent that started
it and is reached only through that agent's prefix, by one of its participants: any other
conversation id is refused in the words used for one that does not exist, so ids reveal
nothing. The three writes take an optional `Idempotency-Key` (runtime/idempotent_writes).

After an assistant turn commits — the end of an exchange — learning is queued on the
server's own worker thread (runtime/learning_worker.LearningWorker): the answer never waits for
it, passes run one person at a time (W2, W5), and the agent's learning mode decides what
they write (P2, P5).
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from engram.api import conversation_models as cm
from engram.api.routes import Call
from engram.control import conversations as conversation_control
from engram.control import views
from engram.engine.extraction import Extractor
from engram.model.clock import iso
from engram.model.conversation import ConversationInfo, EntryKind, TurnStatus
from engram.model.errors import InvalidInput, NotAllowed, NotFound
from engram.model.ids import ConversationId, person_id
from engram.model.wire import WireError, check_shape
from engram.runtime import conversations, history, idempotent_writes, learning_policy
from engram.runtime.extraction import HostPolicy
from engram.runtime.learning_worker import LearningWorker
from engram.store.store import Store

log = logging.getLogger(__name__)
QUEUED = "queued"
TRANSCRIPT_PAGE = 100
MAX_TRANSCRIPT_PAGE = 500
SHUTDOWN_SECONDS = 10.0  # how long a stopping server lets queued learning finish


class ConversationApi:
    """The operations, and the server's learning worker."""

    def __init__(self, store: Store, extractor: Extractor, host: HostPolicy) -> None:
        self.store, self.extractor, self.host = store, extractor, host
        self._worker: LearningWorker | None = None
        self._worker_guard = threading.Lock()

    # ---- the learning worker -------------------------------------------------------------

    def worker(self) -> LearningWorker:
        """The server's learning worker, started on first use."""
        with self._worker_guard:
            if self._worker is None:
                self._worker = LearningWorker(self.store, self.extractor, self.host)
            return self._worker

    def catch_up(self) -> int:
        """At start: queue what an earlier run left unlearned."""
        return self.worker().catch_up()

    def stop_learning(self) -> None:
        """At shutdown: finish queued passes for a while, then leave the rest pending."""
        with self._worker_guard:
            worker, self._worker = self._worker, None
        if worker is not None and not worker.close(SHUTDOWN_SECONDS):
            log.warning("learning was still running at shutdown; its turns stay pending")

    # ---- conversations -------------------------------------------------------------------

    def start(
        self, call: Call, key: str | None, body: cm.NewConversation
    ) -> tuple[dict[str, Any], bool]:
        """Start a conversation of the header's person (always a participant) with the
        agent in the path; answers it, and whether a retry found it."""
        others = [person_id(p) for p in body.participants]
        started = idempotent_writes.start_conversation(
            self.store,
            key,
            [call.session.person, *others],
            surface=body.surface,
            incognito=body.incognito,
            agent=call.agent.name,
        )
        return views.conversation_json(started.info, call.session.person), started.replayed

    def list(self, call: Call) -> dict[str, Any]:
        """The person's conversations with this agent."""
        person = call.session.person
        infos = conversations.conversations_of(self.store, person)
        return {
            "conversations": [
                views.conversation_json(i, person) for i in infos if i.agent == call.agent.name
            ]
        }

    def bound(self, call: Call, conversation: str) -> ConversationInfo:
        """The conversation, if the person takes part in it with this agent; 404 otherwise."""
        person = call.session.person
        info = conversations.conversation_of(self.store, person, ConversationId(conversation))
        if info.agent != call.agent.name:
            raise NotFound(f"There is no conversation {conversation!r} for {person}.")
        return info

    def show(self, call: Call, conversation: str, after: int, limit: int) -> dict[str, Any]:
        """The conversation and one page of its log."""
        info = self.bound(call, conversation)
        page = conversations.transcript(self.store, info.id, after, limit + 1)
        more, page = len(page) > limit, page[:limit]
        return {
            **views.conversation_json(info, call.session.person),
            "entries": [_entry_json(entry, text) for entry, text in page],
            "next_after": page[-1][0].seq if more and page else None,
        }

    def preview_delete(self, call: Call, conversation: str) -> dict[str, Any]:
        """What deleting it for the person would do: their notes that close, keep and
        reopen, the closed ones it shreds, the suggestions it rejects (C4)."""
        info = self.bound(call, conversation)
        return conversation_control.preview_delete(call.session, info.id).to_json()

    def delete(self, call: Call, conversation: str, for_everyone: bool = False) -> dict[str, Any]:
        """Delete a conversation for the calling person (C4): one only they take part in
        goes; from a shared one their turns are excised and their notes from it close,
        while the others keep it. For everyone is a staff action, never an API key's."""
        info = self.bound(call, conversation)
        if for_everyone and len(info.participants) > 1:
            raise NotAllowed(
                "Only support staff may delete a shared conversation for everyone in it "
                "(from the inspector or the CLI); delete it for this person without "
                "for_everyone, or ask support."
            )
        return conversation_control.delete_conversation(call.session, info.id).to_json()

    # ---- writes --------------------------------------------------------------------------

    def append(
        self, call: Call, conversation: str, key: str | None, body: cm.NewTurn
    ) -> tuple[dict[str, Any], bool]:
        """Append a turn: a user turn is the person's, an assistant turn the agent's."""
        info = self.bound(call, conversation)
        author = call.session.person if body.role == "user" else call.agent.name
        status = TurnStatus(body.status)
        written = idempotent_writes.append_turn(
            self.store, info.id, key, role=body.role, author=author, text=body.text, status=status
        )
        learning = self._learning(info, body.role, status)
        if learning == QUEUED:
            self.worker().after_turn(info)  # a queue put: the answer does not wait (W2)
        entry = written.entry
        answer = {
            "turn_id": entry.ref,
            "conversation": info.id,
            "role": entry.kind.value,
            "author": entry.author,
            "status": entry.status,
            "at": iso(entry.at),
            "learning": learning,
        }
        return answer, written.replayed

    def _learning(self, info: ConversationInfo, role: str, status: TurnStatus) -> str:
        """What learning will do with this turn, in a few words."""
        if status is not TurnStatus.COMMITTED:
            return f"nothing is learned from a {status.value} turn (only committed ones teach)"
        refusal = learning_policy.learning_refusal(self.store, info, self.host)
        if refusal is not None:
            return refusal
        if role == EntryKind.USER.value:
            return "learning runs once the assistant's reply to it commits"
        return QUEUED

    def tool_call(
        self, call: Call, conversation: str, key: str | None, body: cm.NewToolCall
    ) -> tuple[dict[str, Any], bool]:
        """Record a tool the agent called, and its result."""
        info = self.bound(call, conversation)
        arguments = json.dumps(body.arguments, ensure_ascii=False, sort_keys=True)
        try:
            check_shape(arguments)
        except WireError as error:
            raise InvalidInput(f"The tool's arguments hold {error}.") from None
        written = idempotent_writes.record_tool_call(
            self.store,
            info.id,
            key,
            name=body.name,
            arguments=arguments,
            result=body.result,
            author=call.agent.name,
            status=body.status,
        )
        entry = written.entry
        answer = {
            "call_id": entry.ref,
            "conversation": info.id,
            "name": entry.body.get("name"),
            "status": body.status,
            "at": iso(entry.at),
        }
        return answer, written.replayed

    # ---- the five history tools, bound to the conversation in the path (H1-H6) -----------

    def find(self, call: Call, conversation: str, body: cm.FindRequest) -> dict[str, Any]:
        """conversation_find."""
        info = self.bound(call, conversation)
        return history.find(self.store, info.id, body.query, body.mode, body.limit)

    def read_turn(self, call: Call, conversation: str, turn: str) -> dict[str, Any]:
        """conversation_read_turn."""
        return history.read_turn(self.store, self.bound(call, conversation).id, turn)

    def read_tool_result(self, call: Call, conversation: str, tool_call: str) -> dict[str, Any]:
        """conversation_read_tool_result."""
        return history.read_tool_result(self.store, self.bound(call, conversation).id, tool_call)

    def recent_turns(self, call: Call, conversation: str, limit: int | None) -> dict[str, Any]:
        """conversation_recent_turns."""
        return history.recent_turns(self.store, self.bound(call, conversation).id, limit)

    def tool_calls(self, call: Call, conversation: str) -> dict[str, Any]:
        """conversation_list_tool_calls."""
        return history.list_tool_calls(self.store, self.bound(call, conversation).id)


def _entry_json(entry: Any, text: str | None) -> dict[str, Any]:
    return {
        "seq": entry.seq,
        "kind": entry.kind.value,
        "id": entry.ref,
        "author": entry.author,
        "status": entry.status,
        "at": iso(entry.at),
        "text": text,
        "name": entry.body.get("name"),
    }
