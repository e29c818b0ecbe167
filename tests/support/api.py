"""Small helpers for asserting on the API's responses, shared by the test modules."""

from __future__ import annotations

import httpx


def field_errors(response: httpx.Response) -> dict[str, str]:
    """Assert a 422 ``validation_error`` and return its ``details.fields`` as field → message."""
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    return {f["field"]: f["message"] for f in error["details"]["fields"]}


def next_link(response: httpx.Response) -> str | None:
    """The URL of the ``Link: <...>; rel="next"`` header, or None on the last page."""
    link = response.headers.get("link")
    return link.split(";")[0].strip("<>") if link else None


async def collect_pages(
    client: httpx.AsyncClient, url: str, headers: dict[str, str]
) -> tuple[list[str], int]:
    """Follow ``Link: rel="next"`` to the end: (every id seen, number of pages)."""
    seen: list[str] = []
    pages = 0
    next_url: str | None = url
    while next_url:
        response = await client.get(next_url, headers=headers)
        assert response.status_code == 200, response.text
        seen += [item["id"] for item in response.json()]
        next_url = next_link(response)
        pages += 1
    return seen, pages
