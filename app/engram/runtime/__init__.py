"""The agent runtime's memory surface: conversations, note writes, assembly, recall."""
