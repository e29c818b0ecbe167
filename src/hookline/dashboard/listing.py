"""Pagination and form helpers shared by the list and edit pages."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from pydantic import ValidationError

from hookline.dashboard.web import PageError
from hookline.errors import ApiError
from hookline.schemas.cursors import decode_cursor, encode_cursor
from hookline.schemas.failures import validation_failure

PAGE_SIZE = 25


def cursor_id(cursor: str | None) -> str | None:
    """The id a ``cursor`` query parameter points after (the same cursors as the API)."""
    try:
        return decode_cursor(cursor or None)
    except ApiError:
        raise PageError(
            400, "Bad page link", "This page link is not valid; start again from the list."
        ) from None


def paginate(
    request: Request, rows: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], str | None]:
    """Trim the ``PAGE_SIZE + 1`` rows fetched to a page; the next page's link when one exists."""
    if len(rows) <= PAGE_SIZE:
        return rows, None
    rows = rows[:PAGE_SIZE]
    return rows, next_page_url(request, rows[-1]["id"])


def next_page_url(request: Request, last_id: str) -> str:
    """This page's URL, with its filters, continuing after ``last_id``."""
    params = {k: v for k, v in request.query_params.items() if v and k != "cursor"}
    params["cursor"] = encode_cursor(last_id)
    return f"{request.url.path}?{urlencode(params)}"


def field_errors(error: ValidationError | ApiError) -> dict[str, str]:
    """Field name → message, worded exactly as the API words them (the same schemas)."""
    failure = validation_failure(error.errors()) if isinstance(error, ValidationError) else error
    fields = (failure.details or {}).get("fields") or [
        {"field": "form", "message": failure.message}
    ]
    errors: dict[str, str] = {}
    for item in fields:
        errors.setdefault(str(item["field"]).split(".")[0], str(item["message"]))
    return errors


def text(form: Any, name: str) -> str:
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""


def whole_number(value: str) -> int | str:
    """A form's ASCII digits as the integer the API's schemas take; anything else as typed, for
    the schema to refuse (Python's ``int`` refuses thousands of digits: typed, not a crash)."""
    if value.isascii() and value.isdigit():
        try:
            return int(value)
        except ValueError:
            return value
    return value
