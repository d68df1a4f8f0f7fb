"""Identifiers. Ids are opaque strings; the prefix tells a reader what kind of thing it names."""

from __future__ import annotations

import re
import secrets
from typing import NewType

PersonId = NewType("PersonId", str)
NoteId = NewType("NoteId", str)
ConversationId = NewType("ConversationId", str)
TurnId = NewType("TurnId", str)
CallId = NewType("CallId", str)
CandidateId = NewType("CandidateId", str)

_PERSON_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


def _token() -> str:
    return secrets.token_hex(6)


def new_note_id() -> NoteId:
    """A fresh random note id."""
    return NoteId("n_" + _token())


def new_conversation_id() -> ConversationId:
    """A fresh random conversation id."""
    return ConversationId("c_" + _token())


def new_turn_id() -> TurnId:
    """A fresh random turn id."""
    return TurnId("t_" + _token())


def new_call_id() -> CallId:
    """A fresh random tool-call id."""
    return CallId("k_" + _token())


def new_candidate_id() -> CandidateId:
    """A fresh random candidate id."""
    return CandidateId("m_" + _token())


def person_id(text: str) -> PersonId:
    """Validate a person id given by a host or a user (letters, digits, . _ @ -; at most 64)."""
    if not _PERSON_ID.fullmatch(text):  # fullmatch: `$` alone lets a final newline in
        from engram.model.errors import InvalidInput

        raise InvalidInput(
            f"{text!r} is not a valid person id; use letters, digits, '.', '_', '@' or '-'."
        )
    return PersonId(text)
