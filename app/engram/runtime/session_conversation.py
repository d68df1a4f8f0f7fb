"""The conversation one agent session serves: the one its host named, or, when the host
named none (a desktop host starts one server per app, not per chat), one of the
session's own, started the first time a call needs it.

A session's own conversation is a chat with the session's person as its only
participant, so its audience is that person alone (S3). It is started once, however many
calls ask for it at the same time, and never for a person the store does not hold: an
erased person is not brought back by a host that is still running.
"""

from __future__ import annotations

import threading

from engram.model.conversation import ConversationInfo, Surface
from engram.model.errors import NotFound
from engram.model.ids import ConversationId, PersonId
from engram.runtime.context import Attribution
from engram.runtime.conversations import require_conversation
from engram.store import conversation_log, journal
from engram.store.store import Store


class SessionConversation:
    """Where a session's calls happen; thread-safe (tool calls run on worker threads)."""

    def __init__(
        self,
        store: Store,
        person: PersonId,
        agent: str | None,
        conversation: ConversationId | None = None,
    ) -> None:
        self.store, self.person, self.agent = store, person, agent
        self.owned = conversation is None  # the session starts (and so owns) its own
        self._id = conversation
        self._lock = threading.Lock()

    @property
    def started(self) -> ConversationId | None:
        """The conversation, if there is one yet (asking never starts it)."""
        return self._id

    def attribution(self) -> Attribution:
        """The session's person and conversation; starts the conversation if it has none."""
        with self._lock:
            if self._id is None:
                self._id = self._start().id
            return Attribution(self.person, self._id)

    def _start(self) -> ConversationInfo:
        with self.store.write() as txn:
            journal.lock(txn, self.person)
            journal.require_person(txn.conn, self.person)
            return conversation_log.create(
                self.store,
                txn,
                [self.person],
                surface=Surface.CHAT,
                incognito=False,
                agent=self.agent,
            )

    def gone(self) -> bool:
        """Whether the conversation was started and has since been deleted."""
        if self._id is None:
            return False
        try:
            require_conversation(self.store, self._id)
        except NotFound:
            return True
        return False

    def gone_sentence(self) -> str:
        """What a call is told once the conversation it served was deleted."""
        if self.owned:
            return (
                f"This session's conversation {self._id} was deleted, so there is nothing "
                "left for its tools to serve; restart the host's Engram server to start a "
                "new one."
            )
        return (
            f"The conversation {self._id} this server was started for was deleted; the host "
            "must start the server for another conversation."
        )
