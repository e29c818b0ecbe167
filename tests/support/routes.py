"""Enumerate an app's HTTP routes, including those of included routers.

FastAPI 0.16x keeps included routers as wrappers in ``app.routes``; their routes are reached
through ``effective_route_contexts()``. Fails loudly on a shape it doesn't know, so a test built
on it can't pass vacuously.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from starlette.routing import Mount, Route


@dataclass(frozen=True)
class RouteInfo:
    method: str
    path: str
    in_schema: bool


def _contexts(route: Any) -> list[Any]:
    contexts = getattr(route, "effective_route_contexts", None)
    if contexts is None:
        raise AssertionError(f"unknown route type {type(route).__name__}")
    return list(contexts())


def http_routes(app: FastAPI) -> list[RouteInfo]:
    found: list[RouteInfo] = []
    for route in app.router.routes:
        if isinstance(route, Mount):
            continue
        items = [route] if isinstance(route, Route) else _contexts(route)
        for item in items:
            for method in sorted(set(item.methods or ()) - {"HEAD"}):
                found.append(RouteInfo(method, item.path, bool(item.include_in_schema)))
    assert found, "no routes found"
    return found
