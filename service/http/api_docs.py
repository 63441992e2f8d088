"""The interactive API docs (`/v1/docs`), served whole by the service: no CDN, so they work offline.

FastAPI's own page loads Swagger UI's JavaScript, CSS and favicon from a CDN, and without internet it stays
blank. The same files ship in the `fastapi-offline` package (Swagger UI 5, which renders OpenAPI 3.1; the
`swagger-ui-bundle` package is still at 4.x, which does not): the service serves them under
`/v1/docs/assets/` and its page points there. The page and its assets need no key (service/http/guard.py).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.requests import Request

DOCS_PATH = "/v1/docs"
ASSETS_PATH = f"{DOCS_PATH}/assets"
ASSETS = Path(str(files("fastapi_offline") / "static"))
SWAGGER_JS, SWAGGER_CSS, FAVICON = "swagger-ui-bundle.js", "swagger-ui.css", "favicon.png"
# Swagger UI's default validatorUrl sends the document's URL to an outside validator for a badge.
SWAGGER_PARAMETERS = {"validatorUrl": None}


def install(app: FastAPI) -> None:
    """Serve the docs page at `DOCS_PATH` and Swagger UI's files under `ASSETS_PATH`. The app must be built
    with `docs_url=None` (FastAPI's own page would load them from a CDN)."""
    assert app.docs_url is None and app.openapi_url is not None
    openapi_url = app.openapi_url
    app.mount(ASSETS_PATH, StaticFiles(directory=ASSETS), name="docs-assets")

    async def docs_page(request: Request) -> HTMLResponse:
        root = str(request.scope.get("root_path", "")).rstrip("/")  # behind a proxy's path prefix
        return get_swagger_ui_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{app.title} - API docs",
            swagger_js_url=f"{root}{ASSETS_PATH}/{SWAGGER_JS}",
            swagger_css_url=f"{root}{ASSETS_PATH}/{SWAGGER_CSS}",
            swagger_favicon_url=f"{root}{ASSETS_PATH}/{FAVICON}",
            swagger_ui_parameters=SWAGGER_PARAMETERS,
        )

    app.add_route(DOCS_PATH, docs_page, include_in_schema=False)
