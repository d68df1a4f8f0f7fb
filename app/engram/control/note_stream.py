"""Every note of a person, a page at a time (issue 19 item 2): `notes list --all` and other
whole-person listings hold one page of notes and their texts, never the whole projection.

In creation order (every interval) the pages are keyset pages after the last note shown,
so notes written meanwhile land after the cursor and nothing is listed twice; the active
notes in ranking order are offset pages (a note whose rank changes while the listing runs
may be seen twice or not at all — as with any paged listing of a live store).
"""

from __future__ import annotations

from collections.abc import Iterator

from engram.control.notes import list_notes, page_after, texts_of
from engram.control.session import PersonSession
from engram.control.views import NoteView
from engram.model.notes import EVERY_NOTE

PAGE = 1_000


def stream_notes(
    session: PersonSession, *, include_closed: bool = False, page: int = PAGE
) -> Iterator[NoteView]:
    """The notes `list_notes` would return (same order, same views), one page in memory."""
    if not include_closed:
        offset = 0
        while True:
            views = list_notes(session, limit=page, offset=offset)
            yield from views
            if len(views) < page:
                return
            offset += page
    after: tuple[int, str] | None = None
    while True:
        _, notes = page_after(session, EVERY_NOTE, after, page)
        texts = texts_of(session, notes)
        for note in notes:
            yield NoteView(note, texts.get(note.id))
        if len(notes) < page:
            return
        last = notes[-1]
        after = (last.created_seq, last.id)
