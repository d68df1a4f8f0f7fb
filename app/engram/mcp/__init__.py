"""The MCP face (`engram mcp`): the agent's tools over stdio."""
