"""`python -m engram` runs the command line."""

from engram.cli.main import run

run()
