"""Stores changed the way anyone holding the file can change them (issue 15, item 8)."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

from engram.store.crypto import KdfParams
from engram.store.dialect import make_engine
from engram.store.location import store_url
from engram.store.store_info import read_info


def set_kdf_limits(path: Path, params: KdfParams) -> None:
    """Rewrite the store's recorded Argon2id limits and its (unkeyed) checksum."""
    url = store_url(str(path))
    engine = make_engine(url)
    try:
        info = dataclasses.replace(read_info(engine, url), kdf=params)
    finally:
        engine.dispose()
    connection = sqlite3.connect(path)
    with connection:
        connection.execute(
            "UPDATE store_info SET kdf = ?, checksum = ?",
            (json.dumps(params.to_json()), info.checksum()),
        )
    connection.close()
