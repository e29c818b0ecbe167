"""The dashboard at ``/dashboard``: server-rendered pages where account holders sign up, get
their API keys and watch their webhooks' deliveries.

``install(app)`` wires it into the application (routes, static files, HTML error pages).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

from fastapi import Depends, FastAPI, Request
from fastapi.responses import FileResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from hookline import ids
from hookline.dashboard import (
    auth,
    pages_activity,
    pages_contacts,
    pages_erasures,
    pages_home,
    pages_keys,
    pages_operations,
    pages_people,
    pages_webhooks,
)
from hookline.dashboard.sessions import require_session
from hookline.dashboard.throttle import Throttle
from hookline.dashboard.web import (
    PREFIX,
    LoginRequired,
    PageError,
    error_page,
    not_found,
    redirect,
)

STATIC_DIR = Path(__file__).parent / "static"


async def _page_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, PageError)
    return error_page(request, exc)


async def _login_required(request: Request, exc: Exception) -> Response:
    target = f"{PREFIX}/login"
    if request.method == "GET":
        path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        target += f"?next={quote(path, safe='')}"
    return redirect(request, target)


# Not ids: a link's token (a malformed one gets the link's own "unusable" page) and the
# catch-all's path.
_NOT_IDS = frozenset({"token", "rest"})
_ID_PATTERNS = {name: re.compile(pattern) for name, pattern in ids.ID_PATTERNS.items()}
_ANY_ID = re.compile(ids.ANY_ID_PATTERN)


async def _ids_checked(request: Request) -> None:
    """A path id that cannot be an id (``ids.ID_PATTERNS``) is a 404 page before any database
    sees it, as in the API (PostgreSQL refuses a NUL in text); signed out, the log-in page
    first, as for any other id."""
    for name, value in request.path_params.items():
        if name in _NOT_IDS or _ID_PATTERNS.get(name, _ANY_ID).fullmatch(value):
            continue
        await require_session(request)
        raise not_found()


async def _home() -> RedirectResponse:
    # Whoever types the bare address wants the dashboard (sign up, keys, deliveries).
    return RedirectResponse(PREFIX, status_code=307)


async def _favicon() -> FileResponse:
    # Browsers ask for /favicon.ico on pages without a <link rel="icon"> (the JSON API's).
    return FileResponse(STATIC_DIR / "favicon.svg", media_type="image/svg+xml")


def install(app: FastAPI) -> None:
    app.state.dashboard_throttle = Throttle()
    app.mount(f"{PREFIX}/static", StaticFiles(directory=STATIC_DIR), name="dashboard-static")
    # Home last: it holds the catch-all that answers unknown dashboard paths with an HTML 404.
    for module in (
        auth,
        pages_people,
        pages_keys,
        pages_webhooks,
        pages_operations,
        pages_erasures,
        pages_contacts,
        pages_activity,
        pages_home,
    ):
        app.include_router(
            module.router, include_in_schema=False, dependencies=[Depends(_ids_checked)]
        )
    app.add_exception_handler(PageError, _page_error)
    app.add_exception_handler(LoginRequired, _login_required)
    app.add_api_route("/", _home, methods=["GET"], include_in_schema=False)
    app.add_api_route("/favicon.ico", _favicon, methods=["GET"], include_in_schema=False)
