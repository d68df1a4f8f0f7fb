"""`engram serve`: the typed memory API over HTTP, on loopback unless told otherwise."""

from __future__ import annotations

import json
import logging
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from engram.api.routes import MAX_BODY_BYTES, PERSON_HEADER, MemoryApi, Response
from engram.store.store import Store

log = logging.getLogger(__name__)
LOOPBACK = {"127.0.0.1", "::1", "localhost"}


def make_server(store: Store, host: str = "127.0.0.1", port: int = 8765) -> ThreadingHTTPServer:
    """A server bound to host:port (port 0 picks a free one); serve_forever() runs it."""
    api = MemoryApi(store)

    class Handler(BaseHTTPRequestHandler):
        server_version = "engram"
        sys_version = ""
        timeout = 30  # a client that stops sending is dropped

        def _answer(self) -> None:
            try:
                answer = self._route()
            except Exception:  # whatever happens, the caller gets an answer
                log.exception("the HTTP face failed on %s %s", self.command, self.path)
                answer = Response(500, {"error": "Something went wrong inside Engram."})
            self._send(answer)

        def _route(self) -> Response:
            url = urlsplit(self.path)
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY_BYTES:
                self.close_connection = True
                return Response(413 if length > 0 else 400, {"error": "Bad Content-Length."})
            if len(self.headers.get_all(PERSON_HEADER) or []) > 1:
                return Response(400, {"error": f"Send {PERSON_HEADER} once."})
            body = self.rfile.read(length) if length else b""
            query = dict(parse_qsl(url.query))
            return api.handle(self.command, url.path, query, dict(self.headers), body)

        def _send(self, answer: Response) -> None:
            # ASCII JSON: whatever text is inside, the bytes on the wire are valid UTF-8
            data = json.dumps(answer.body).encode("ascii")
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _refuse(self) -> None:
            self._send(Response(405, {"error": f"This API does not answer {self.command}."}))

        do_GET = do_POST = do_PATCH = do_DELETE = _answer
        do_PUT = do_HEAD = do_OPTIONS = _refuse

        def log_message(self, fmt: str, *args: Any) -> None:
            log.info("%s %s", self.address_string(), fmt % args)

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server
