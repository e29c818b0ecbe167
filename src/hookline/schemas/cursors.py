"""The cursor of a paged list: the id of the previous page's last item, for the API's lists
and the dashboard's pages alike."""

from __future__ import annotations

import re

from hookline.errors import ValidationFailed

# Any id-shaped string is a valid cursor (it means "items older than this id"), so the OpenAPI
# pattern is exactly the rule.
CURSOR_PATTERN = "^[A-Za-z0-9_-]{1,100}$"
_CURSOR = re.compile(CURSOR_PATTERN)


def encode_cursor(last_id: str) -> str:
    return last_id


def decode_cursor(cursor: str | None) -> str | None:
    """The id a cursor points after; a 422 on ``cursor`` when it cannot be one."""
    if cursor is None:
        return None
    if not _CURSOR.fullmatch(cursor):
        raise ValidationFailed.for_field("cursor", "cursor is not valid; use the Link header's URL")
    return cursor
