"""``wolfie api``: Packs over REST (FastAPI, served by uvicorn), for agents outside Python
and MCP. The routes call the front door the MCP server calls (``wolfie/front_door.py``),
so scopes, checks and results are the same at every door (docs/api.md)."""
