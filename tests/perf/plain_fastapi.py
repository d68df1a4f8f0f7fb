"""The outside floor for bench_http: a plain FastAPI app on uvicorn, nothing of Engram.

Run as a script, it serves on a free loopback port (one process, one worker, uvicorn's
defaults — as `engram serve` runs) and prints its address on the first line:

    GET  /hello          {"ok": true}
    GET  /page?limit=20  twenty small JSON objects from a list in memory
    POST /echo           the JSON body back, validated by a pydantic model

so the benchmark compares each of our routes with the framework doing the least it can
for a request of the same shape, in the same run on the same machine.
"""

from __future__ import annotations

import socket
import sys

import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel

app = FastAPI()
ROWS = [{"id": f"n{i}", "text": f"A short note, number {i}.", "kind": "fact"} for i in range(200)]


class Query(BaseModel):
    query: str
    limit: int | None = None


@app.get("/hello")
def hello() -> dict[str, bool]:
    return {"ok": True}


@app.get("/page")
def page(limit: int = 20) -> dict[str, object]:
    return {"items": ROWS[:limit], "total": len(ROWS), "next_cursor": None}


@app.post("/echo")
def echo(body: Query) -> dict[str, object]:
    return {"items": [], "query": body.query}


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    print(f"http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
