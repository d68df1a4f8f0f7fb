"""The access report's first two pages: the summary, and how to ask for a correction or an
erasure (and how to check the document). Neither names an id: page 1 is what a person
reads first, and ids mean nothing to them (the appendix has them for staff)."""

from __future__ import annotations

from engram.control.report_document import Block, Counts, Section
from engram.control.wording import counted, verb


def summary_section(
    person: str, made_at: str, made_by: str, counts: Counts, shared: list[str], integrity: str
) -> Section:
    """Page 1: what is kept, by kind and scope, what is shared and with whom, what was
    erased, and whether the store checked out."""
    total = counts.holding + counts.closed
    kept = (
        f"{counted(total, 'note')} about you {verb(total, 'is', 'are')} kept: "
        f"{counts.holding} {verb(counts.holding, 'holds', 'hold')} now and {counts.closed} "
        f"{verb(counts.closed, 'is', 'are')} closed (kept for their history, never used). "
        f"They come from or concern {counted(counts.conversations, 'conversation')}."
    )
    erased = [
        f"{counted(counts.deleted_notes, 'note')} deleted (kept closed, with who deleted "
        "it and when, and never used)."
        if counts.deleted_notes
        else "No note was deleted.",
        f"{counted(counts.deleted_conversations, 'conversation')} deleted: "
        f"{verb(counts.deleted_conversations, 'its', 'their')} text and keys are destroyed."
        if counts.deleted_conversations
        else "No conversation was deleted.",
        f"{counted(counts.removed_parts, 'part')} of conversations removed "
        "(marked where they were in the transcripts)."
        if counts.removed_parts
        else "No part of a conversation was removed.",
    ]
    disclosed = (
        f"Notes were given to an agent {counted(counts.disclosures, 'time')} in all; "
        "each note lists every time, to which agent, and who could read the answer."
    )
    return Section(
        f"What Engram keeps about {person}",
        (
            Block("What is kept", lines=(kept,)),
            Block(
                "By kind",
                tuple((k, str(n)) for k, n in counts.by_kind.items()) or (("notes", "0"),),
            ),
            Block(
                "By scope",
                tuple((k, str(n)) for k, n in counts.by_scope.items()) or (("notes", "0"),),
                (
                    "Private notes are used only when you alone can read the answer; shared "
                    "notes may be used whoever reads it.",
                ),
            ),
            Block("What is shared, and with whom", lines=(*shared, disclosed)),
            Block("What was erased", lines=tuple(erased)),
            Block("Integrity", lines=(integrity,)),
        ),
        (
            f"This report was made on {made_at} by {made_by}. It lists everything Engram "
            f"keeps about {person}: every note, every conversation as kept, what was "
            "suggested, and everything that happened to them.",
        ),
        new_page=False,
        key="summary",
    )


def rights_section(person: str) -> Section:
    """Page 2: how to ask for a correction or an erasure, and how to check this document."""
    return Section(
        "How to ask for a correction or an erasure",
        (
            Block(
                "If something is wrong",
                lines=(
                    "Tell the person who gave you this report which note is wrong (its "
                    "number, for example “note 4”) and what it should say. They correct it in "
                    "Engram's inspector; the old version is closed, not overwritten, and the "
                    "correction is recorded with who made it and when.",
                ),
            ),
            Block(
                "If you want something erased",
                lines=(
                    "You may ask for one note, one conversation, or everything about you to "
                    "be erased. A deleted note is closed and never used again. A deleted "
                    "conversation has its text and its keys destroyed, and the notes learned "
                    "from it lose their words. Erasing everything destroys every key and "
                    f"row about {person}; only a record that an erasure happened remains, "
                    "with no content, and you can be given a report proving nothing readable "
                    "is left.",
                ),
            ),
            Block(
                "If you want fewer people to see a note",
                lines=(
                    "Ask for it to be made private: a private note is used only when you "
                    "alone can read the agent's answer.",
                ),
            ),
            Block(
                "How to check this document",
                lines=(
                    "This file is signed with the key of the Engram store it came from. "
                    "Whoever keeps that store can check that it is unaltered by running:",
                    "engram verify-report FILE",
                    "It answers in one sentence whether the file came from that store "
                    "unaltered. Any change to the file, even of one character, makes the "
                    "check fail.",
                ),
            ),
        ),
        key="rights",
    )
