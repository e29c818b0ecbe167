"""``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), served entirely by hookline.

FastAPI's own pages load both from a CDN, so they are blank on a machine without internet. The
assets come from the ``fastapi-offline`` package (installed with hookline), are served under
``/docs/assets``, and the pages run no inline script: Swagger UI starts from
``docs_static/swagger-init.js``, ReDoc from its ``<redoc spec-url>`` element. ReDoc's bundle
is served with its one remote image, the vendor's logo in the menu's footer, taken out
(``redoc_bundle``): the page's policy would refuse it, and a console error on every visit says
that something is broken when nothing is.
"""

from __future__ import annotations

import functools
from html import escape
from importlib import resources
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs/assets"
FAVICON = "/dashboard/static/favicon.svg"
_OUR_ASSETS = Path(__file__).parent / "docs_static"
REDOC_BUNDLE = f"{ASSETS}/redoc.js"
_REDOC_REMOTE_LOGO = b"https://cdn.redoc.ly/redoc/logo-mini.svg"
# An image that fails to load: ReDoc then drops the logo's element (its own onError).
_NO_IMAGE = b"data:,"

# Self origin only, no inline script. Both viewers set styles from script (ReDoc renders its
# styles into <style> elements), so styles may be inline; ReDoc's search runs in a blob: worker.
DOCS_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}

_PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{title}</title>
  <link rel="icon" href="{favicon}" type="image/svg+xml">
  <link rel="stylesheet" href="{assets}/docs.css">
  {head}
</head>
<body>
  {body}
</body>
</html>
"""


def _page(title: str, head: str, body: str) -> HTMLResponse:
    html = _PAGE.format(title=escape(title), favicon=FAVICON, assets=ASSETS, head=head, body=body)
    return HTMLResponse(html, headers=DOCS_HEADERS)


def swagger_page(openapi_url: str, title: str) -> HTMLResponse:
    return _page(
        f"{title} API · Swagger UI",
        f'<link rel="stylesheet" href="{ASSETS}/swagger-ui.css">',
        f'<div id="swagger-ui" data-openapi-url="{escape(openapi_url)}"></div>\n'
        f'  <script src="{ASSETS}/swagger-ui-bundle.js"></script>\n'
        f'  <script src="{ASSETS}/swagger-init.js"></script>',
    )


def redoc_page(openapi_url: str, title: str) -> HTMLResponse:
    return _page(
        f"{title} API · ReDoc",
        "",
        f'<redoc spec-url="{escape(openapi_url)}"></redoc>\n'
        f'  <script src="{REDOC_BUNDLE}"></script>',
    )


@functools.cache
def redoc_bundle() -> bytes:
    """``fastapi-offline``'s ReDoc with the footer logo's CDN address replaced by an image
    that fails at once, so the page asks no other origin for anything."""
    bundle = resources.files("fastapi_offline").joinpath("static", "redoc.standalone.js")
    return bundle.read_bytes().replace(_REDOC_REMOTE_LOGO, _NO_IMAGE)


def install(app: FastAPI) -> None:
    """Serve /docs, /redoc and their assets; the app must be built with docs_url=None."""

    @app.get(REDOC_BUNDLE, include_in_schema=False)
    async def redoc_script() -> Response:
        return Response(redoc_bundle(), media_type="text/javascript; charset=utf-8")

    app.mount(
        ASSETS,
        StaticFiles(directory=_OUR_ASSETS, packages=[("fastapi_offline", "static")]),
        name="docs-assets",
    )

    @app.get("/docs", include_in_schema=False)
    async def swagger(request: Request) -> HTMLResponse:
        return swagger_page(str(request.app.openapi_url), request.app.title)

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        return redoc_page(str(request.app.openapi_url), request.app.title)
