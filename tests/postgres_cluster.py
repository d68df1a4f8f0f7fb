"""A throwaway PostgreSQL cluster: a private data folder, a free loopback port, removed
afterwards. packaging/bootstrap.sh installs the server. The integration tests share one
for the session; the reliability tests start their own, since they stop it."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
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


class Cluster:
    """One initialised cluster that can be started, stopped and frozen."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="engram-pg-"))
        self._as_user: list[str] = []
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root
            shutil.chown(self.root, "postgres")
            self._as_user = ["runuser", "-u", "postgres", "--"]
        self.data, self.port = self.root / "data", _free_port()
        self._run(_bin("initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres")

    @property
    def server(self) -> str:
        """The URL prefix (postgresql+psycopg://…/) a database name completes."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/"

    def _run(self, *command: str) -> None:
        subprocess.run([*self._as_user, *command], check=True, capture_output=True)

    def start(self, *, durable: bool = False) -> None:
        """Start the server and wait until it accepts connections; unless `durable` (the
        benchmarks, compared with SQLite's synchronous=FULL), without fsync."""
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1"
        options += " -c fsync=on" if durable else " -c fsync=off"
        self._run(
            _bin("pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"), "-w", "-o",
            options, "start",
        )  # fmt: skip

    def stop(self) -> None:
        """Stop the server the way a crash does (no shutdown checkpoint)."""
        self._run(_bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")

    def running(self) -> bool:
        """Whether the server is up (its postmaster.pid is there)."""
        return (self.data / "postmaster.pid").exists()

    def postmaster_pid(self) -> int:
        """The server's main process (to freeze it with SIGSTOP)."""
        return int((self.data / "postmaster.pid").read_text().split()[0])

    @contextmanager
    def frozen(self) -> Iterator[None]:
        """The server stopped with SIGSTOP: it accepts TCP connections but never answers."""
        pid = self.postmaster_pid()
        os.kill(pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(pid, signal.SIGCONT)

    def create_database(self, name: str) -> str:
        """A fresh, empty database; its SQLAlchemy URL."""
        import psycopg

        admin = self.server.replace("postgresql+psycopg", "postgresql") + "postgres"
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.server + name

    def remove(self) -> None:
        """Stop the server if it runs, and delete the cluster."""
        if self.running():
            subprocess.run(
                [*self._as_user, _bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
                capture_output=True,
            )
        shutil.rmtree(self.root, ignore_errors=True)


@contextmanager
def running_cluster(*, durable: bool = False) -> Iterator[Cluster]:
    """A started cluster, removed at the end."""
    cluster = Cluster()
    try:
        cluster.start(durable=durable)
        yield cluster
    finally:
        cluster.remove()
