"""A throwaway PostgreSQL cluster for the tests that prove the store runs on it for real.

packaging/bootstrap.sh installs the server; this starts a private cluster on a free
loopback port in a temporary folder and removes it afterwards.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def _bin(name: str) -> str:
    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None
    )
    if found is None:
        pytest.fail(f"PostgreSQL's {name} is not installed; run packaging/bootstrap.sh first.")
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A server URL prefix (postgresql+psycopg://…/) for a cluster only these tests use."""
    root = Path(tempfile.mkdtemp(prefix="engram-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        shutil.chown(root, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = root / "data", _free_port()
    run = lambda *cmd: subprocess.run([*as_user, *cmd], check=True, capture_output=True)  # noqa: E731
    run(_bin("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres")
    run(
        _bin("pg_ctl"),
        "-D",
        str(data),
        "-l",
        str(root / "log"),
        "-w",
        "-o",
        f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off",
        "start",
    )
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/"
    finally:
        run(_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: str, request: pytest.FixtureRequest) -> str:
    """A fresh, empty database for one test."""
    import psycopg

    name = "t_" + request.node.name.lower().replace("[", "_").replace("]", "")[:40]
    name = "".join(c if c.isalnum() else "_" for c in name)
    admin = postgres_server.replace("postgresql+psycopg", "postgresql") + "postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')
    return postgres_server + name
