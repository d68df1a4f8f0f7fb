"""The conversations tab: the list, a transcript, both search modes, a search across all
of a person's conversations, excising a tool result, and deleting a conversation."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Signal

from engram.control import conversations as conversation_control
from engram.control import notes as memory_control
from engram.control import turn_block
from engram.control.cascade_preview import NONE, PreviewSection, for_whom_sentence
from engram.control.turn_block import TurnSight
from engram.engine.history_search import NO_MATCH_HINT
from engram.gui.controllers.hub import Hub
from engram.gui.controllers.panel import PanelController
from engram.gui.tasks import TaskContext
from engram.gui.widgets import offer
from engram.model.errors import EngramError
from engram.model.ids import ConversationId, PersonId, TurnId
from engram.runtime import conversations as runtime_conversations
from engram.runtime import history
from engram.runtime.person_search import PersonIndex

SEARCH_LIMIT = 25


class ConversationsController(PanelController):
    """Loads the list when shown; a provenance link opens it at a turn."""

    transcript_shown = Signal(str)
    searched = Signal(str)
    sight_shown = Signal(str)  # the turn whose "what did the agent see?" was shown
    note_requested = Signal(str)  # a note chosen there, to show in the notes view

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.tab = self.w.conversations
        self._pending_turn: tuple[str, str] | None = None
        self._person_index: PersonIndex | None = None  # decrypted: lives while unlocked
        panel = self.w.conversations
        panel.conversation_selected.connect(self.show_transcript)
        panel.delete_requested.connect(self.delete_conversation)
        panel.search_requested.connect(self.search_conversation)
        panel.excise_requested.connect(self.excise_result)
        panel.person_search_requested.connect(self.search_person)
        panel.turn_requested.connect(self.open_turn)
        panel.sight_requested.connect(self.show_turn_sight)
        self.w.delete_conversation_action.triggered.connect(self._delete_current)
        hub.changed.connect(self._forget_index)
        self.w.tabs.currentChanged.connect(lambda _i: self._update_actions())
        panel.list.currentItemChanged.connect(lambda _c, _p: self._update_actions())
        hub.past_changed.connect(self._past_changed)

    def _update_actions(self) -> None:
        """Delete conversation acts on the conversation selected in view, or not at all;
        never in the past."""
        panel, past = self.w.conversations, self.hub.frozen
        chosen = self.hub.session is not None and panel.current() is not None
        offer(self.w.delete_conversation_action, chosen and self.shown(), past)
        offer(panel.delete_button, chosen, past)

    def _past_changed(self, _past: bool) -> None:
        self._update_actions()
        self._offer_excise()

    def _offer_excise(self) -> None:
        """Staff may remove a tool result's content, in the present only: in the past the
        transcript offers no "remove this result…" link."""
        panel, session = self.w.conversations, self.hub.session
        can = session is not None and session.actor.startswith("staff:") and not self.hub.frozen
        if can != panel.can_excise:
            panel.can_excise = can
            panel.rerender()

    def _forget_index(self, _what: str = "") -> None:
        self._person_index = None

    def clear(self) -> None:
        self._forget_index()
        self.w.conversations.clear()
        self._update_actions()
        self._offer_excise()

    def refresh(self) -> None:
        session = self.hub.session
        if session is None:
            return

        shown = self.w.conversations.current()

        def work(_: TaskContext) -> tuple[list[Any], dict[str, str]]:
            infos = runtime_conversations.conversations_of(session.store, session.person)
            openings = runtime_conversations.opening_words(
                session.store, [info.id for info in infos]
            )
            return infos, openings

        def done(result: tuple[list[Any], dict[str, str]]) -> None:
            self.w.conversations.show_conversations(*result)
            pending, self._pending_turn = self._pending_turn, None
            if pending is not None:
                self._select_turn(*pending)
            elif shown is not None:
                self.w.conversations.select(shown)  # still there after a change? keep it

        self.hub.run(work, done)

    def show_transcript(self, conversation: str) -> None:
        """Load one conversation's turns."""
        session = self.hub.session
        if session is None:
            return

        def done(entries: Any) -> None:
            self.w.conversations.show_transcript(entries)
            self.transcript_shown.emit(conversation)

        self.hub.run(
            lambda _: runtime_conversations.transcript(session.store, ConversationId(conversation)),
            done,
        )

    def show_turn_sight(self, conversation: str, turn: str) -> None:
        """What did the agent see? The block the turn got, rebuilt from the usage ledger;
        a note chosen there is shown in the notes view."""
        session = self.hub.session
        if session is None:
            return

        def done(sight: TurnSight) -> None:
            self.sight_shown.emit(turn)
            chosen = self.hub.ask(lambda p: p.show_turn_sight(sight))
            if chosen:
                self.note_requested.emit(chosen)

        self.hub.run(
            lambda _: turn_block.turn_sight(session, ConversationId(conversation), TurnId(turn)),
            done,
        )

    def open_turn(self, conversation: str, turn: str) -> None:
        """Provenance: open the conversation at the turn a note came from."""
        panel = self.w.conversations
        if self.stale or panel.list.count() == 0:
            self._pending_turn = (conversation, turn)  # selected once the list has loaded
            self.stale = True
            if self.shown():
                self.refresh_if_shown()
            else:
                self.w.tabs.setCurrentWidget(panel)
            return
        self.w.tabs.setCurrentWidget(panel)
        self._select_turn(conversation, turn)

    def _select_turn(self, conversation: str, turn: str) -> None:
        if not self.w.conversations.select(conversation, turn or None):
            self.hub.fail(
                "That conversation is no longer in this store (it was deleted); nothing of it "
                "can be shown."
            )

    # ---- search -------------------------------------------------------------------------

    def search_conversation(self, conversation: str, query: str, mode: str) -> None:
        """conversation_find, as the agent would call it, shown beside the transcript."""
        session = self.hub.session
        if session is None:
            return
        args = {"query": query, "mode": mode, "limit": SEARCH_LIMIT}

        def done(answer: dict[str, Any]) -> None:
            self.w.conversations.show_results(answer, query, mode)
            self.searched.emit(conversation)

        self.hub.run(
            lambda _: history.dispatch(
                session.store, ConversationId(conversation), "conversation_find", args
            ),
            done,
        )

    def search_person(self, query: str, mode: str) -> None:
        """Search every conversation of the person. The index is built in memory on first
        use (off the UI thread, with progress) and dropped on lock or any change."""
        session = self.hub.session
        if session is None:
            return
        known = self._person_index

        def work(ctx: TaskContext) -> tuple[PersonIndex, dict[str, Any]]:
            index = known
            if index is None or index.person != session.person:
                own = memory_control.own_audience(session)
                index = PersonIndex.build(session.store, own, ctx.progress, ctx.cancelled)
            try:
                hits, more = index.search(query, mode)
            except EngramError as error:
                return index, {"error": str(error)}
            answer: dict[str, Any] = {
                "matches": [h.to_json() for h in hits],
                "truncated": more,
            }
            if not hits:
                answer["hint"] = NO_MATCH_HINT
            return index, answer

        def done(result: tuple[PersonIndex, dict[str, Any]]) -> None:
            # Kept only if it arrives before a lock: the hub drops it otherwise.
            self._person_index, answer = result
            self.w.conversations.show_results(answer, query, mode)
            found = len(answer.get("matches", []))
            self.hub.status(  # replaces "Indexing … 7 of 7": the work is over
                f"Searched all of {session.person}'s conversations: "
                f"{found} match{'es' if found != 1 else ''}."
            )
            self.searched.emit("*")

        def failed(message: str) -> None:
            self.w.statusBar().clearMessage()
            self.hub.fail(message)

        task = self.hub.run(work, done, failed)
        task.progressed.connect(
            lambda d, t: self.hub.status(f"Indexing conversations… {d} of {t}", 0)
        )

    # ---- changes ------------------------------------------------------------------------

    def excise_result(self, conversation: str, call: str) -> None:
        """Staff remove a tool result's content, with a reason the log keeps."""
        session = self.hub.session
        if session is None or not self.hub.writable():
            return
        reason = self.hub.ask(lambda p: p.excise_reason(), "the tool result was kept.")
        if not reason:
            return
        self.hub.act(
            lambda: runtime_conversations.excise_tool_result(
                session.store,
                ConversationId(conversation),
                call,
                actor=session.actor,
                reason=reason,
            ),
            f"Result of {call} removed.",
        )

    def _delete_current(self) -> None:
        conversation = self.w.conversations.current()
        if conversation and self.shown() and self.hub.writable():
            self.delete_conversation(conversation)

    def delete_conversation(self, conversation: str) -> None:
        """Preview which notes close and which survive, then delete on typed confirmation.
        A shared conversation is deleted for the person shown; staff may choose to delete
        it for everyone, after a preview naming each person (C4, issue 18 item 5)."""
        session = self.hub.session
        if session is None or not self.hub.writable():
            return
        target = ConversationId(conversation)

        def confirm(preview: conversation_control.ConversationDeletion) -> None:
            typed = self.hub.ask(
                lambda p: p.typed_confirm(
                    "Delete conversation", cascade_html(preview), "delete", "Delete conversation"
                ),
                "the conversation was not deleted.",
            )
            if typed is None:
                return
            if typed != "delete":
                self.hub.fail("Nothing was deleted: the confirmation did not match.")
                return
            everyone = preview.for_everyone
            named = preview.named or "the conversation"
            self.hub.act(
                lambda: conversation_control.delete_conversation(
                    session, target, for_everyone=everyone
                ),
                f"Deleted {named} for {session.person}."
                if preview.keeping
                else f"Deleted {named}.",
            )

        def choose(preview: conversation_control.ConversationDeletion) -> None:
            if preview.keeping and conversation_control.is_staff(session.actor):
                whom = self.hub.ask(
                    lambda p: p.choose(
                        "Delete conversation",
                        for_whom_text(session.person, preview),
                        [
                            ("me", f"Delete for {session.person}"),
                            ("everyone", "Delete for everyone (staff)"),
                        ],
                    ),
                    "the conversation was not deleted.",
                )
                if whom is None:
                    return
                if whom == "everyone":
                    self.hub.run(
                        lambda _: conversation_control.preview_delete(
                            session, target, for_everyone=True
                        ),
                        confirm,
                    )
                    return
            confirm(preview)

        self.hub.run(lambda _: conversation_control.preview_delete(session, target), choose)


def for_whom_text(person: str, preview: conversation_control.ConversationDeletion) -> str:
    """The choice a staff member makes for a shared conversation, as control words it."""
    return for_whom_sentence(preview.named, PersonId(person), preview.keeping)


def _escaped(text: str) -> str:
    """Text for a rich-text label: markup characters escaped, apostrophes left as typed."""
    return html.escape(text, quote=False)


def _section_html(section: PreviewSection) -> str:
    e = _escaped
    items = "".join(
        f"<li><b>{e(line.words)}</b><br><span style='color:gray'>{e(line.reason)}</span></li>"
        for line in section.lines
    )
    return f"<p><b>{e(section.heading)}</b></p><ul>{items or f'<li><i>{NONE}</i></li>'}</ul>"


def cascade_html(deletion: conversation_control.ConversationDeletion) -> str:
    """The control layer's cascade preview, printed: its sentence, then for each person
    affected the notes that close, survive, reopen or lose their words and the suggestions
    rejected, each with its reason; the conversation's id only in the tooltip (issue 17
    #13), no note's id at all."""
    e = _escaped
    preview = deletion.preview
    named = deletion.named or "this conversation"
    shown = f"<span title='{html.escape(deletion.conversation)}'>{e(named)}</span>"
    sentence = e(preview.sentence).replace(e(named), shown, 1)
    page = f"<p>{sentence}</p>"
    for person in preview.people:
        if preview.by_person:
            page += f"<h3>{e(person.heading)}</h3>"
        page += "".join(_section_html(section) for section in person.sections)
    if preview.others_sentence:
        page += f"<p>{e(preview.others_sentence)}</p>"
    return page
