"""A throwaway PostgreSQL cluster for the tests that prove the store runs on it for real.

packaging/bootstrap.sh installs the server; tests/postgres_cluster.py starts a private
cluster on a free loopback port in a temporary folder and removes it afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.postgres_cluster import running_cluster


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A server URL prefix (postgresql+psycopg://…/) for a cluster only these tests use."""
    with running_cluster() as cluster:
        yield cluster.server


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
