"""Help texts that several commands share: what an id is and where a user finds it."""

from __future__ import annotations

PERSON = "the person's id (from `engram persons`)"
PERSON_MAYBE_NEW = "the person's id (from `engram persons`); a new id adds the person"
CONVERSATION = "the conversation's id (from `engram conversations list`)"
NOTE = "the note's id (from `engram notes list`)"
CANDIDATE = "the candidate's id (from `engram candidates list`)"
AGENT = "the agent's name (from `engram agents list`)"
