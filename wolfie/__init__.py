"""Wolfie's front doors: the ``wolfie`` command line (``wolfie.cli``) and the MCP server
for agent hosts (``wolfie.mcp``). Both call the engine (``packs``) through one code path
(``wolfie.agent_tools``); the batch system (``flows``) is imported only inside the
commands that need it."""
