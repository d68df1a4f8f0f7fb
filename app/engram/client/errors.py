"""What the client raises when Engram refuses a call."""

from __future__ import annotations

import contextlib
from typing import Any

import httpx


class EngramHTTPError(Exception):
    """Engram answered with an error status; `message` is the server's one sentence."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def __repr__(self) -> str:
        return f"EngramHTTPError({self.status}, {self.message!r})"


def refusal_of(response: httpx.Response) -> EngramHTTPError:
    """The error an answer with a 4xx or 5xx status stands for."""
    sentence: Any = None
    # Not JSON, or not an object: not Engram's answer (a proxy's error page, say).
    with contextlib.suppress(ValueError, AttributeError):
        sentence = response.json().get("error")
    if not isinstance(sentence, str) or not sentence:
        sentence = (
            f"The server answered HTTP {response.status_code} without saying why; check that "
            f"{response.request.url.copy_with(path='/', query=None)} is an Engram server."
        )
    return EngramHTTPError(response.status_code, sentence)
