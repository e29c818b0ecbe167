"""The OpenAPI document's security: bearer auth, and each /v1 operation's scopes taken from the
route's key rule (``DirectRoute.scopes``), so /docs and the generated clients know the key."""

from __future__ import annotations

from typing import Any

from hookline.api.routing import DirectRoute
from hookline.app import create_app
from hookline.settings import Settings


def _document_and_routes() -> tuple[dict[str, Any], dict[tuple[str, str], DirectRoute]]:
    app = create_app(Settings(database_url="sqlite://"))  # the document needs no database
    routes = {
        (method.lower(), route.path_format): route
        for included in app.routes
        for context in getattr(included, "effective_route_contexts", list)()
        if isinstance(route := context.original_route, DirectRoute)
        for method in route.methods or ()
    }
    return app.openapi(), routes


def test_the_document_declares_bearer_auth() -> None:
    document, _ = _document_and_routes()
    assert document["components"]["securitySchemes"] == {
        "bearerAuth": {"type": "http", "scheme": "bearer", "description": "An API key, hl_live_..."}
    }
    assert "security" not in document, "a global requirement would cover /healthz too"


def test_each_v1_operation_requires_its_routes_scopes_and_no_other_path_any() -> None:
    document, routes = _document_and_routes()
    checked = 0
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if not path.startswith("/v1/"):
                assert "security" not in operation, path
                continue
            scopes = routes[(method, path)].scopes
            assert operation["security"] == [{"bearerAuth": list(scopes)}], (method, path)
            first_line = operation["description"].split("\n\n")[0]
            for scope in scopes:
                assert f"`{scope}`" in first_line, (method, path)
            checked += 1
    assert checked == sum(1 for (_, path) in routes if path.startswith("/v1/")) >= 25


def test_descriptions_say_which_scopes_in_words() -> None:
    document, _ = _document_and_routes()
    paths = document["paths"]
    assert paths["/v1/contacts"]["post"]["description"] == "Requires scope `contacts:write`."
    assert paths["/v1/account"]["get"]["description"] == "Requires an API key (any scope)."
    events = paths["/v1/events"]["get"]["description"]
    assert events.startswith(
        "Requires one of the scopes `contacts:read`, `calls:read`, `webhooks:read`.\n\n"
    )
    assert "Requires" not in str(paths["/healthz"]["get"].get("description", ""))
