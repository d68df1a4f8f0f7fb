"""Adapters for agent frameworks, each an optional extra; faces like the CLI, HTTP and MCP,
thin over runtime/ and control/."""
