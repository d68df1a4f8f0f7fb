"""The encrypted, append-only store: schema, crypto, keys, journals, logs, verify, erase.

SQLAlchemy is imported here and nowhere else.
"""
