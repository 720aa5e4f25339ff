"""Storage: where a Pack lives, its table schemas, filters and scopes, and the one
LanceDB gateway. Only modules here import ``lancedb``; nothing here imports another
folder of ``packs`` (besides the plain records and errors)."""

from packs.store.quick_import import defer_namespace_client

defer_namespace_client()  # before any module here imports lancedb (quick_import.py)
