"""The bundle's entry point: the `engram` command (CLI and `engram desk`)."""

from engram.cli.main import run

run()
