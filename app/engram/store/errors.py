"""Database errors, re-exported so layers above the store never import SQLAlchemy."""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError

DatabaseError = SQLAlchemyError

# SQLite after its busy timeout; PostgreSQL's lock-wait timeout, deadlock and
# serialisation failures: another writer held what this one needed.
_BUSY_WORDS = ("database is locked", "database is busy", "database table is locked")
_BUSY_SQLSTATES = {"55P03", "40P01", "40001"}


def is_busy(error: OperationalError) -> bool:
    """Whether the database refused because another writer held it (try again later)."""
    text = str(error.orig).lower()
    return getattr(error.orig, "sqlstate", None) in _BUSY_SQLSTATES or any(
        word in text for word in _BUSY_WORDS
    )


__all__ = ["DatabaseError", "IntegrityError", "OperationalError", "is_busy"]
