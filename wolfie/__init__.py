"""Wolfie's front doors: the ``wolfie`` command line (``wolfie.cli``) and the MCP server
for agent hosts (``wolfie.mcp``), the REST API (``wolfie.api``) and the retrievers
(``wolfie.integrations``). All call the engine (``packs``) through one front door
(``wolfie.front_door``); the batch system (``flows``) is imported only inside the
commands that need it."""
