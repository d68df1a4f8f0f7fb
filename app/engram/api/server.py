"""`engram serve`: the typed memory API over HTTP, on loopback unless told otherwise."""

from __future__ import annotations

import json
import logging
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from engram.api.routes import MAX_BODY_BYTES, MemoryApi, Response
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
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                answer = Response(413, {"error": "The request body is too large."})
                self.close_connection = True
            else:
                body = self.rfile.read(length) if length > 0 else b""
                query = dict(parse_qsl(url.query))
                answer = api.handle(self.command, url.path, query, dict(self.headers), body)
            self._send(answer)

        def _send(self, answer: Response) -> None:
            data = json.dumps(answer.body, ensure_ascii=False).encode()
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_DELETE = _answer

        def log_message(self, fmt: str, *args: Any) -> None:
            log.info("%s %s", self.address_string(), fmt % args)

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server
