"""Running an ASGI application (the memory API, or MCP over Streamable HTTP) on uvicorn:
HTTP/1.1 with keep-alive, limits on header and body sizes, TLS, and one sentence for a
port that is taken.

Listening beyond loopback needs TLS (`--certfile`/`--keyfile`): API keys and memories
must not cross a network in clear. Behind a reverse proxy that terminates TLS, say so
with `--insecure-plain-http`.
"""

from __future__ import annotations

import errno
import ipaddress
import json
import re
import signal
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import uvicorn

from engram.api.routes import MAX_BODY_BYTES, BodyTimeout, TooLarge, status_of
from engram.model.errors import EngramError, InvalidInput

if TYPE_CHECKING:
    from engram.engine.extraction import Extractor
    from engram.runtime.extraction import HostPolicy

MAX_HEADER_BYTES = 16 * 1024  # all request headers together
BODY_SECONDS = 10.0  # a body that stops arriving is dropped after this long
BACKLOG = 2048
KEEP_ALIVE_SECONDS = 15
# A refused body up to this much over the limit is read to its end before the answer:
# closing a socket with unread bytes makes the kernel reset the connection, and the client
# may then never see the 413 (the "lingering close" web servers do). Larger bodies are cut
# off at once.
DRAIN_BYTES = 1024 * 1024
# Turns and tool results may hold 200,000 characters, more than the usual limit allows
# (as much as 12 bytes a character once a client escapes it in JSON, two texts a call).
TRANSCRIPT_BODY_BYTES = 4 * 1024 * 1024
_TRANSCRIPT_WRITE = re.compile(r"/conversations/[^/]+/(turns|tool-calls)/?$")

ASGIApp = Any


def is_loopback(host: str) -> bool:
    """Whether `host` is this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class Listen:
    """Where and how to listen."""

    host: str
    port: int
    certfile: str | None
    keyfile: str | None

    @property
    def scheme(self) -> str:
        """http or https."""
        return "https" if self.certfile else "http"

    @staticmethod
    def checked(
        host: str, port: int, certfile: str | None, keyfile: str | None, plain_ok: bool
    ) -> Listen:
        """Refuse what would expose keys or memories, in one sentence."""
        if not 0 <= port <= 65535:
            raise InvalidInput(f"{port} is not a port number; use 1 to 65535, or 0 for any.")
        if bool(certfile) != bool(keyfile):
            raise InvalidInput("Give --certfile and --keyfile together.")
        for path in (certfile, keyfile):
            if path and not Path(path).is_file():
                raise InvalidInput(f"There is no file {path}.")
        if not is_loopback(host) and not certfile and not plain_ok:
            raise InvalidInput(
                f"Listening on {host} would send API keys and memories over the network in "
                "clear; give --certfile and --keyfile, or --insecure-plain-http behind a TLS "
                "proxy."
            )
        return Listen(host, port, certfile, keyfile)


def bind(listen: Listen) -> socket.socket:
    """The listening socket; a taken port or an unknown address is one sentence."""
    try:
        info = socket.getaddrinfo(
            listen.host, listen.port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )[0]
    except socket.gaierror:
        raise InvalidInput(f"{listen.host} is not an address of this machine.") from None
    # Made with IPPROTO_TCP (not 0): asyncio sets TCP_NODELAY only on sockets whose proto
    # says TCP, and accepted connections carry the listener's proto.
    sock = socket.socket(info[0], socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(info[4])
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise EngramError(
                f"Port {listen.port} on {listen.host} is already in use; stop what is "
                "listening there or choose another with --port."
            ) from None
        raise EngramError(
            f"Cannot listen on {listen.host}:{listen.port} ({error.strerror})."
        ) from None
    # Accepted connections also inherit TCP_NODELAY from the listening socket (Linux).
    # Without it, a response written in two pieces (headers, then body) waits for the
    # client's delayed ACK: about 40 ms on every keep-alive request.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.listen(BACKLOG)
    sock.set_inheritable(True)
    return sock


def uvicorn_server(app: ASGIApp, listen: Listen) -> uvicorn.Server:
    """A configured uvicorn server (HTTP/1.1 over h11, keep-alive, size limits, TLS)."""
    config = uvicorn.Config(
        BodyLimit(app),
        http="h11",
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        backlog=BACKLOG,
        ssl_certfile=listen.certfile,
        ssl_keyfile=listen.keyfile,
        server_header=False,
        access_log=False,
        log_level="warning",
        lifespan="auto",
    )
    return uvicorn.Server(config)


def serve_memory_api(
    store: Any, listen: Listen, extractor: Extractor | None = None, host: HostPolicy | None = None
) -> int:
    """`engram serve`: the memory API on one open store, learning in the background with
    `extractor` (the rule extractor by default) unless `host` (a HostPolicy) says not."""
    from engram.api.app import build_app
    from engram.runtime.extraction import HostPolicy

    app = build_app(store, extractor=extractor, host=host or HostPolicy())
    return run_app(app, listen, "the memory API", "/v1")


def run_app(app: ASGIApp, listen: Listen, what: str, path: str) -> int:
    """Serve until interrupted, after saying where (the real port, when 0 was asked)."""
    sock = bind(listen)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in str(host) else host
    if not is_loopback(listen.host):
        print(
            f"engram: listening on {listen.host} — other machines can reach {what}; keep a "
            "firewall in front of it.",
            file=sys.stderr,
        )
    print(f"Serving {what} on {listen.scheme}://{shown}:{port}{path} (Ctrl+C stops).", flush=True)
    server = uvicorn_server(app, listen)
    # uvicorn shuts down gracefully on SIGTERM (requests answered, the app's shutdown run),
    # then raises the signal again; this handler turns that into a clean exit, as Ctrl+C is.
    previous = signal.signal(signal.SIGTERM, _stopped)
    try:
        server.run(sockets=[sock])
    except (KeyboardInterrupt, Stopped):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
    return 0


class Stopped(Exception):
    """The server was asked to stop (SIGTERM), and it has."""


def _stopped(_signal: int, _frame: Any) -> None:
    raise Stopped


class BodyLimit:
    """Refuse headers over MAX_HEADER_BYTES with 431 (h11 bounds only headers that arrive
    in pieces), bodies over MAX_BODY_BYTES (by Content-Length or as they stream in,
    chunked or not) with 413, and bodies that stop arriving with 408 — one sentence each."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope)
        drain = limit + DRAIN_BYTES  # a refused body up to this size is read to its end
        headers = scope.get("headers") or []
        if sum(len(k) + len(v) + 4 for k, v in headers) > MAX_HEADER_BYTES:
            sentence = f"The request headers may hold at most {MAX_HEADER_BYTES // 1024} KiB."
            await _refuse(send, 431, sentence)
            return
        declared = dict(headers).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            status = 413 if declared.isdigit() else 400
            if status == 413 and int(declared) <= drain:
                await _drain(receive, drain)
            sentence = self._too_big(limit) if status == 413 else "Bad Content-Length."
            await _refuse(send, status, sentence)
            return
        seen = 0
        started = False
        body_in = False

        async def limited_receive() -> Any:
            nonlocal seen, body_in
            if body_in:
                # After the body, a receive only waits to hear the client leave (a stream, a
                # slow answer): the body's timeout is not for it.
                return await receive()
            try:
                with anyio.fail_after(BODY_SECONDS):
                    message = await receive()
            except TimeoutError:
                raise BodyTimeout("The request body stopped arriving; send it again.") from None
            body_in = message["type"] != "http.request" or not message.get("more_body", False)
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    if message.get("more_body", False):
                        await _drain(receive, drain - seen)
                    raise TooLarge(self._too_big(limit))
            return message

        async def watched_send(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, watched_send)
        except (TooLarge, BodyTimeout) as error:  # from an app that did not answer them
            if started:
                raise
            await _refuse(send, status_of(error), str(error))

    def limit_for(self, scope: dict[str, Any]) -> int:
        """The body limit of this request: larger for a turn or a tool call."""
        if scope.get("method") == "POST" and _TRANSCRIPT_WRITE.search(scope.get("path", "")):
            return max(self.limit, TRANSCRIPT_BODY_BYTES)
        return self.limit

    @staticmethod
    def _too_big(limit: int) -> str:
        return f"The request body may hold at most {limit // 1024} KiB."


async def _drain(receive: Any, budget: int) -> None:
    """Read and discard the rest of a refused body, up to `budget` bytes and BODY_SECONDS;
    a body that is larger, or slower, is left unread."""
    with anyio.move_on_after(BODY_SECONDS):
        while budget > 0:
            message = await receive()
            if message["type"] != "http.request":
                return
            budget -= len(message.get("body", b""))
            if not message.get("more_body", False):
                return


async def _refuse(send: Any, status: int, sentence: str) -> None:
    body = json.dumps({"error": sentence}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
