"""A typed Python client for Engram's HTTP API (`engram serve`), sync and async, so an
application need not run Engram in its own process.

    from engram.client import EngramClient

    with EngramClient(url, key=api_key, agent="helper", person=signed_in_user) as memory:
        chat = memory.start_conversation()
        memory.append_turn(chat.id, "user", "Hello!")

It speaks HTTP only (httpx and pydantic; nothing of the engine or the store). It is for a
trusted server-side host: `person` goes in the trusted X-Engram-External-User-Id header
and `key` is a project API key, so a browser, a mobile app or any code the person
controls must never hold either — whoever has the key can name any person.
"""

from engram.client.async_client import AsyncEngramClient
from engram.client.errors import EngramHTTPError
from engram.client.sync_client import EngramClient

__all__ = ["AsyncEngramClient", "EngramClient", "EngramHTTPError"]
