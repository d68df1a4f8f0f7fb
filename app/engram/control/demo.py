"""`engram demo`: a realistic store built through the real runtime and control paths.

Three people over six weeks: private and shared conversations, notes of every kind and
scope, a restatement from a second conversation (confidence rises), a contradiction, a
person's correction, a deletion with a reason, a transient note, an incognito conversation
that teaches nothing, staff acting under their own id, the blocks real turns got (in a
private and in a shared conversation) in the usage ledger, and a deleted conversation
whose notes close.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from engram.control import candidates as candidate_control
from engram.control import conversations as conversation_control
from engram.control import notes as memory_control
from engram.control.persons import list_persons
from engram.control.session import PersonSession
from engram.engine.rule_extractor import RuleExtractor
from engram.model.clock import ManualClock
from engram.model.conversation import Surface
from engram.model.ids import ConversationId, PersonId, TurnId
from engram.model.scope import Durability, Kind, Scope
from engram.runtime import agents, context, conversations, extraction, note_writes
from engram.runtime.note_writes import NoteDraft
from engram.store.crypto import KdfParams
from engram.store.location import stores_folder
from engram.store.store import Store

MAYA, SAM, INES = PersonId("maya"), PersonId("sam"), PersonId("ines")


DEMO_PASSPHRASE = "demo"  # made-up people: public, and the same for run.sh, CLI and GUI
DEMO_NAME = "demo.engram"


def default_demo_path() -> Path:
    """Where the demo lives unless told otherwise: demo.engram in the user data folder,
    beside (never in) the default store that real data goes to (issue 20 item 8)."""
    return stores_folder() / DEMO_NAME


DEMO_CONVERSATIONS = 9  # the chats _play holds, for progress


class _Script:
    """Plays conversations turn by turn on a moving clock."""

    def __init__(
        self,
        store: Store,
        clock: ManualClock,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.progress = progress
        self.played = 0

    def later(self, **delta: float) -> None:
        self.clock.advance(timedelta(**delta))

    def chat(
        self,
        people: list[PersonId],
        turns: list[tuple[str, str]],
        *,
        surface: Surface = Surface.CHAT,
        incognito: bool = False,
    ) -> tuple[ConversationId, list[TurnId]]:
        if self.progress is not None:
            self.progress(self.played, DEMO_CONVERSATIONS)
        self.played += 1
        info = conversations.start_conversation(
            self.store, people, surface=surface, incognito=incognito, agent="helper"
        )
        ids = []
        for author, text in turns:
            self.later(minutes=1)
            role = "assistant" if author == "helper" else "user"
            ids.append(
                conversations.append_turn(self.store, info.id, role=role, author=author, text=text)
            )
        return info.id, ids

    def answer(
        self, person: PersonId, conversation: ConversationId, turn: TurnId, text: str
    ) -> TurnId:
        """The helper answers a turn with memory: the block it got goes into the ledger."""
        self.later(seconds=5)
        context.assemble_turn(
            self.store, context.Attribution(person, conversation, turn), record_usage=True
        )
        self.later(seconds=25)
        return conversations.append_turn(
            self.store, conversation, role="assistant", author="helper", text=text
        )

    def learn(
        self,
        person: PersonId,
        text: str,
        kind: Kind,
        scope: Scope,
        where: tuple[ConversationId, TurnId],
        **extra: Any,
    ) -> Any:
        self.later(seconds=30)
        draft = NoteDraft(text=text, kind=kind, scope=scope, **extra)
        return note_writes.learn_note(self.store, person, draft, where[0], where[1])


def build_demo(
    location: str | None,
    *,
    passphrase: str | None = None,
    kdf: KdfParams | None = None,
    start: datetime | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Create a store at `location` and fill it; returns what it holds. `progress` hears
    (conversations played, of how many) as the script plays."""
    begin = start or (datetime.now(UTC) - timedelta(days=42)).replace(microsecond=0)
    clock = ManualClock(begin)
    store = Store.create(location, passphrase=passphrase, kdf=kdf, clock=clock)
    try:
        _play(_Script(store, clock, progress))
        if progress is not None:
            progress(DEMO_CONVERSATIONS, DEMO_CONVERSATIONS)
        people = list_persons(store)
    finally:
        store.close()
    return {
        "store_id": store.info.id,
        "persons": {
            p.id: {"notes": p.all_notes, "active": p.active_notes, "conversations": p.conversations}
            for p in people
        },
    }


def _play(s: _Script) -> None:
    store = s.store
    c1, t1 = s.chat(
        [MAYA],
        [
            (MAYA, "Bonjour! I just moved to Lyon for a new job at the botanical institute."),
            ("helper", "Welcome to Lyon! How can I help you settle in?"),
            (
                MAYA,
                "Keep answers short please, I read on my phone. And I'm vegetarian, so "
                "restaurant tips need to fit that.",
            ),
            ("helper", "Noted: short answers and vegetarian-friendly suggestions."),
            (MAYA, "I'd rather we talk in French when we can."),
        ],
    )
    lyon = s.learn(MAYA, "Lives in Lyon.", Kind.FACT, Scope.DIRECT, (c1, t1[0]), confidence_bp=7000)
    s.learn(
        MAYA,
        "Works at the botanical institute.",
        Kind.FACT,
        Scope.UNSPECIFIED,
        (c1, t1[0]),
        confidence_bp=6500,
    )
    short = s.learn(
        MAYA,
        "Prefers short answers.",
        Kind.PREFERENCE,
        Scope.UNSPECIFIED,
        (c1, t1[2]),
        confidence_bp=7000,
    )
    veg = s.learn(MAYA, "Is vegetarian.", Kind.FACT, Scope.DIRECT, (c1, t1[2]), confidence_bp=7500)
    s.learn(
        MAYA,
        "French",
        Kind.STYLE,
        Scope.PORTABLE,
        (c1, t1[4]),
        topic="language",
        confidence_bp=8000,
    )
    s.learn(
        MAYA,
        "Warm and brief",
        Kind.STYLE,
        Scope.PORTABLE,
        (c1, t1[2]),
        topic="tone",
        confidence_bp=6000,
    )
    note_writes.add_digest_line(store, MAYA, c1, "Maya moved to Lyon and set up her preferences.")

    s.later(days=6)
    c2, t2 = s.chat(
        [MAYA],
        [
            (MAYA, "Any vegetarian bakeries near Croix-Rousse? Still not eating meat, of course."),
            ("helper", "Try the one on Rue d'Austerlitz."),
            (MAYA, "I have a dentist appointment on Tuesday, remind me to leave early."),
        ],
    )
    s.later(seconds=20)
    conversations.record_tool_call(
        store,
        c2,
        name="places_search",
        arguments='{"query": "vegetarian bakery", "near": "Croix-Rousse, Lyon"}',
        result="1. Boulangerie du Plateau, Rue d'Austerlitz (vegetarian options)\n"
        "2. Pain & Cie, Grande Rue de la Croix-Rousse",
    )
    note_writes.restate(store, MAYA, veg, c2, t2[0])
    dentist = s.learn(
        MAYA,
        "Has a dentist appointment on Tuesday.",
        Kind.OPEN_THREAD,
        Scope.DIRECT,
        (c2, t2[2]),
        confidence_bp=6000,
    )
    note_writes.add_digest_line(store, MAYA, c2, "Looked for vegetarian bakeries in Lyon.")

    s.later(days=5)
    c3, t3 = s.chat(
        [MAYA, SAM],
        [
            (SAM, "Maya, are you leading the community garden project this spring?"),
            (MAYA, "Yes, I lead it. I still owe you the budget draft, Sam."),
        ],
    )
    # A shared conversation: the block Maya's turn gets withholds her private notes (S2).
    t3.append(s.answer(MAYA, c3, t3[1], "I'll note the budget draft as an open item for Maya."))
    s.later(minutes=1)
    t3.append(
        conversations.append_turn(
            store,
            c3,
            role="user",
            author=SAM,
            text="Great. I prefer email for anything with numbers.",
        )
    )
    s.learn(
        MAYA,
        "Leads the community garden project.",
        Kind.FACT,
        Scope.PORTABLE,
        (c3, t3[1]),
        confidence_bp=8000,
    )
    # S4: learned in a shared conversation, yet its own scope is private.
    s.learn(
        MAYA,
        "Owes Sam the garden budget draft.",
        Kind.OPEN_THREAD,
        Scope.DIRECT,
        (c3, t3[1]),
        confidence_bp=7000,
    )
    s.learn(
        SAM,
        "Prefers email for anything with numbers.",
        Kind.PREFERENCE,
        Scope.PORTABLE,
        (c3, t3[3]),
        confidence_bp=7000,
    )
    note_writes.add_digest_line(
        store, MAYA, c3, "Planned the garden project budget with Sam.", scope=Scope.PORTABLE
    )

    s.later(days=3)
    c4, t4 = s.chat(
        [MAYA],
        [
            (MAYA, "Big news: I moved from Lyon to Grenoble last week, closer to the mountains."),
            ("helper", "Congratulations on the move to Grenoble!"),
            (MAYA, "I'm at the airport right now, flight delayed."),
            (MAYA, "Bakery hunting again — vegetarian as ever."),
        ],
    )
    s.later(seconds=20)
    lookup = conversations.record_tool_call(
        store,
        c4,
        name="contacts_lookup",
        arguments='{"name": "moving company"}',
        result="Déménagements Alpes — ask for Luc, 04 76 00 00 00 (private mobile)",
    )
    s.later(hours=2)
    conversations.excise_tool_result(
        store,
        c4,
        lookup,
        actor="staff:dana",
        reason="The result held a third party's private phone number.",
    )
    note_writes.contradict(
        store,
        MAYA,
        lyon,
        NoteDraft("Lives in Grenoble.", Kind.FACT, Scope.DIRECT, confidence_bp=8000),
        c4,
        t4[0],
    )
    s.later(seconds=30)
    airport = note_writes.learn_note(
        store,
        MAYA,
        NoteDraft(
            "Is at the airport right now.", Kind.FACT, Scope.DIRECT, Durability.TRANSIENT, 5000
        ),
        c4,
        t4[2],
    )
    note_writes.restate(store, MAYA, veg, c4, t4[3])
    s.later(hours=5)
    note_writes.retire(store, MAYA, airport)

    s.later(days=2)
    s.chat(
        [MAYA],
        [
            (MAYA, "Just thinking out loud about changing jobs. Don't remember this."),
            ("helper", "Understood, this chat is incognito."),
        ],
        incognito=True,
    )

    s.later(days=4)
    maya = PersonSession(store, MAYA, MAYA)
    memory_control.edit_note(maya, short, text="Prefers short answers, with the summary first.")
    s.later(minutes=2)
    memory_control.delete_note(maya, dentist, reason="The appointment is over.")
    s.later(minutes=2)
    memory_control.add_note(maya, "Allergic to penicillin.", Kind.FACT, Scope.DIRECT)

    s.later(days=3)
    c5, t5 = s.chat(
        [SAM],
        [
            (SAM, "I'm training for the Lyon half marathon in April."),
            ("helper", "Good luck with the training!"),
            (SAM, "Please answer in English, short and direct."),
        ],
    )
    s.learn(
        SAM,
        "Is training for the Lyon half marathon in April.",
        Kind.OPEN_THREAD,
        Scope.DIRECT,
        (c5, t5[0]),
        confidence_bp=6500,
    )
    s.learn(
        SAM,
        "English",
        Kind.STYLE,
        Scope.PORTABLE,
        (c5, t5[2]),
        topic="language",
        confidence_bp=8000,
    )
    c6, t6 = s.chat(
        [SAM], [(SAM, "My old phone number is 06 12 34 56 78, note it."), ("helper", "Noted.")]
    )
    s.learn(
        SAM,
        "Old phone number 06 12 34 56 78.",
        Kind.FACT,
        Scope.DIRECT,
        (c6, t6[0]),
        confidence_bp=6000,
    )
    s.later(hours=1)
    conversation_control.delete_conversation(PersonSession(store, SAM, SAM), c6)

    s.later(days=2)
    c7, t7 = s.chat(
        [INES, SAM],
        [
            (INES, "Channel note: I'm the new volunteer coordinator for the garden."),
            (SAM, "Welcome Ines!"),
        ],
        surface=Surface.CHANNEL,
    )
    s.learn(
        INES,
        "Is the volunteer coordinator for the community garden.",
        Kind.FACT,
        Scope.PORTABLE,
        (c7, t7[0]),
        confidence_bp=7000,
    )
    s.learn(
        INES,
        "Joined the garden team this month.",
        Kind.FACT,
        Scope.UNSPECIFIED,
        (c7, t7[0]),
        confidence_bp=6000,
    )

    s.later(days=1)
    staff = PersonSession(store, MAYA, "staff:dana")
    works = [
        v for v in memory_control.list_notes(staff) if v.text == "Works at the botanical institute."
    ]
    if works:
        memory_control.edit_note(staff, works[0].note.id, scope=Scope.PORTABLE)

    s.later(hours=2)
    c8, t8 = s.chat([MAYA], [(MAYA, "What should I cook tonight?")])
    context.recall_turn(store, context.Attribution(MAYA, c8, t8[0]), record_usage=True)
    s.answer(MAYA, c8, t8[0], "A vegetarian gratin dauphinois — short recipe below.")

    s.later(days=1)
    _learning(s)


def _learning(s: _Script) -> None:
    """The rule extractor at work: an agent whose learning suggests, candidates reviewed by
    a person and by staff (one applied over an older note, one rejected, some pending)."""
    store = s.store
    agents.set_agent(
        store, "coach", {"memory": {"learning": {"mode": "suggest"}}}, actor="staff:dana"
    )
    info = conversations.start_conversation(store, [MAYA], agent="coach")
    for text in (
        "New chapter: I work at the Grenoble botanical garden now.",
        "I really like bouldering, and I hate crowded gyms.",
        "I'm allergic to peanuts, by the way.",
        "Remind me to renew my passport before the summer.",
    ):
        s.later(minutes=2)
        conversations.append_turn(store, info.id, role="user", author=MAYA, text=text)
        s.later(seconds=40)
        conversations.append_turn(
            store, info.id, role="assistant", author="coach", text="Got it, thanks for saying."
        )
    s.later(minutes=5)
    extraction.learn_person(store, MAYA, RuleExtractor())
    maya = PersonSession(store, MAYA, MAYA)
    pending = {c["text"]: c for c in candidate_control.list_candidates(maya, "pending")}
    s.later(hours=3)
    job = pending.get("Works at the Grenoble botanical garden.")
    if job:  # contradicts "Works at the botanical institute."
        candidate_control.approve(maya, job["id"], job["revision"], apply_now=True)
    crowds = pending.get("Dislikes crowded gyms.")
    if crowds:
        staff = PersonSession(store, MAYA, "staff:dana")
        candidate_control.reject(
            staff, crowds["id"], crowds["revision"], "A passing remark, not worth keeping."
        )
