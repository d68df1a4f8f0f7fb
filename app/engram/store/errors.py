"""Database errors, re-exported so layers above the store never import SQLAlchemy."""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError

DatabaseError = SQLAlchemyError

__all__ = ["DatabaseError", "IntegrityError", "OperationalError"]
