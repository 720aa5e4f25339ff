"""The Pack explorer: server-rendered pages at ``/ui`` of ``wolfie api`` (docs/explorer.md).

Its own room: it reads and acts only through :mod:`wolfie.front_door`, behind the REST
API's bearer token and scope guard (:class:`wolfie.api.app.Guard`).
"""
