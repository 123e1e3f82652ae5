"""The API page (``/docs``, ``/redoc``) from files in the installed package, never a CDN.

FastAPI's pages load Swagger UI and ReDoc from a CDN: on a machine with no route
to it (a private network, a laptop offline) ``/docs`` is a blank page. Here they
come from the ``fastapi-offline`` package's copies (Swagger UI 5, ReDoc 2; a wheel
of about 0.8 MB), served at ``/docs/static``; the pages name no address outside
the service. Swagger UI keeps the token of "Authorize" across reloads.
"""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

__all__ = ["STATIC_URL", "add_pages"]

#: Where the pages' scripts, styles and icon are served.
STATIC_URL = "/docs/static"

_STATIC_DIR = Path(fastapi_offline.__file__).parent / "static"

_SWAGGER_PARAMETERS = {
    # The token entered under "Authorize" survives a reload of the page.
    "persistAuthorization": True,
    # Swagger UI would send the spec to validator.swagger.io for a badge.
    "validatorUrl": None,
}


def add_pages(app: FastAPI) -> None:
    """``/docs`` (Swagger UI) and ``/redoc`` over ``app``'s OpenAPI, assets served by
    the app itself. Make ``app`` with ``docs_url=None, redoc_url=None``."""
    app.mount(STATIC_URL, StaticFiles(directory=_STATIC_DIR), name="docs-static")
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    async def swagger(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title=app.title + " API",
            swagger_js_url=f"{root}{STATIC_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{STATIC_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{STATIC_URL}/favicon.png",
            swagger_ui_parameters=_SWAGGER_PARAMETERS,
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(
            openapi_url=root + openapi_url,
            title=app.title + " API",
            redoc_js_url=f"{root}{STATIC_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{STATIC_URL}/favicon.png",
            with_google_fonts=False,
        )
