"""Where a store lives: a path (SQLite) or any SQLAlchemy URL."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from engram.store.dialect import sqlite_path

DEFAULT_NAME = "default.engram"


def stores_folder() -> Path:
    """Where stores live unless told otherwise: the platform's user data folder."""
    return platformdirs.user_data_path("engram")


def default_store_path() -> Path:
    """The platform's user data folder, e.g. ~/.local/share/engram/default.engram."""
    return stores_folder() / DEFAULT_NAME


def store_url(location: str | os.PathLike[str] | None) -> str:
    """Turn --store / ENGRAM_STORE / the default into a SQLAlchemy URL."""
    text = str(location) if location else os.environ.get("ENGRAM_STORE") or ""
    if not text:
        text = str(default_store_path())
    if "://" in text:
        return text
    return "sqlite:///" + str(Path(text).expanduser().resolve())


def checkpoint_path(url: str, store_id: str) -> Path:
    """Beside a SQLite file; otherwise in the user data folder, named by store id."""
    path = sqlite_path(url)
    if path is not None:
        return path.with_name(path.name + ".checkpoint")
    return platformdirs.user_data_path("engram") / "checkpoints" / f"{store_id}.checkpoint"


def describe(url: str) -> str:
    """A store location as a person would write it."""
    path = sqlite_path(url)
    return str(path) if path is not None else url
