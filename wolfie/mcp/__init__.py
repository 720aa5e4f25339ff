"""``wolfie mcp``: a Pack served to agent hosts over the Model Context Protocol."""
