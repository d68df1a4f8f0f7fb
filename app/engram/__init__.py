"""Engram: see and control what an AI agent remembers about a person."""

__version__ = "0.1.0"
