"""The `engram` command line: parses, calls control/runtime, prints. No rules live here."""
