"""Disclosed to (issue 21 item 6): every turn, audience and agent that received a note,
from the usage ledger, for the note's detail in the inspector and `notes show`.

Each use says when, how (put in what the agent saw for a turn, returned when it recalled
memory, found by its search), in which conversation and turn, who could read the answer
(the conversation's readers, S3: not who spoke) and which agent it was. A use in a
conversation still kept can be opened as "What did the agent see?" (control.turn_block);
one whose conversation was deleted since says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram.control.wording import day, listed
from engram.engine.scope import audience_for
from engram.model.clock import iso
from engram.model.conversation import ConversationInfo
from engram.model.ids import ConversationId, PersonId
from engram.model.notes import Usage
from engram.model.scope import AudienceKind
from engram.store import conversation_log
from engram.store.store import Store

_HOW = {
    "assembly": "put in what the agent saw for a turn",
    "recall": "returned when the agent recalled memory",
    "search": "found by the agent's memory search",
}


def _readers(info: ConversationInfo, person: PersonId) -> tuple[str, str]:
    """The audience kind, and who could read the answer, in words (S3)."""
    audience = audience_for(person, info).kind
    others = [str(p) for p in info.participants if p != person]
    if audience is AudienceKind.SUBJECT_ALONE:
        return audience.value, f"{person} alone"
    if audience is AudienceKind.SHARED and others:
        return audience.value, listed([str(person), *others])
    if audience is AudienceKind.SHARED:
        return audience.value, f"everyone in the {info.surface.value} (a shared place)"
    return audience.value, "readers Engram could not establish"


def disclosed_to(store: Store, person: PersonId, uses: Sequence[Usage]) -> list[dict[str, Any]]:
    """Each use of a note, oldest first: when, how, the conversation and turn, its
    audience and readers, and the agent; `seen` says whether "What did the agent see?"
    can be opened for it (a turn of a conversation still kept)."""
    wanted = sorted({u.conversation for u in uses if u.conversation})
    with store.read() as conn:
        infos = {c: conversation_log.get(conn, ConversationId(c)) for c in wanted}
    found: list[dict[str, Any]] = []
    for use in uses:
        info = infos.get(use.conversation) if use.conversation else None
        entry: dict[str, Any] = {
            "at": iso(use.at),
            "via": use.via,
            "how": _HOW.get(use.via, f"returned by the agent's tool '{use.via}'"),
            "rank": use.rank,
            "conversation": use.conversation,
            "turn": use.turn,
            "agent": info.agent if info else None,
            "audience": None,
            "readers": None,
            "conversation_kept": info is not None,
            "seen": bool(info is not None and use.turn),
        }
        if info is not None:
            entry["audience"], entry["readers"] = _readers(info, person)
            entry["conversation_started"] = iso(info.created_at)
            entry["conversation_day"] = day(info.created_at)
        found.append(entry)
    return found
