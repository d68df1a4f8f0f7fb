"""Adapters that plug Engram into agent frameworks, each behind an optional extra."""
