"""The API's documentation pages, ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), served
with no CDN.

FastAPI's own pages load Swagger UI and ReDoc from a CDN, so ``/docs`` is blank on a
network that can't reach one (issue 45). Here both pages load their scripts, style sheet
and icon from this server, under :data:`ASSETS`: the files the ``fastapi-offline``
package ships (its ``static/``: Swagger UI, Apache-2.0; ReDoc, MIT; the package, MIT).
Only its files are used, not its app factory.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs-assets"  # where the shipped files are served
ASSETS_PACKAGE = "fastapi_offline"


def assets_folder() -> Path:
    """The folder of Swagger UI's and ReDoc's files inside the installed package."""
    spec = importlib.util.find_spec(ASSETS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"No module named {ASSETS_PACKAGE!r}", name=ASSETS_PACKAGE)
    return Path(next(iter(spec.submodule_search_locations))) / "static"


def install(app: FastAPI) -> None:
    """Add ``/docs``, its OAuth2 redirect page and ``/redoc`` to ``app`` (built with
    ``docs_url=None, redoc_url=None``), over the files under :data:`ASSETS`."""
    app.mount(ASSETS, StaticFiles(directory=assets_folder()), name="docs-assets")
    schema, title = app.openapi_url or "/openapi.json", app.title
    redirect = app.swagger_ui_oauth2_redirect_url or "/docs/oauth2-redirect"

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=schema,
            title=f"{title} - Swagger UI",
            oauth2_redirect_url=redirect,
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon.png",
        )

    @app.get(redirect, include_in_schema=False)
    def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=schema,
            title=f"{title} - ReDoc",
            redoc_js_url=f"{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS}/favicon.png",
            with_google_fonts=False,
        )
