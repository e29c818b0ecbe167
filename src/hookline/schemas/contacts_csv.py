"""Contacts as CSV: the export's columns and cells (the API's ``GET /v1/contacts/export`` and the
dashboard's download), and the import's reading of them back into rows for the bulk upsert."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator, Iterable
from typing import Any

from hookline.domain import contacts as domain
from hookline.errors import ValidationFailed
from hookline.storage.db import Database

COLUMNS = domain.CONTACT_FIELDS
TAG_SEPARATOR = ";"
# OWASP's CSV injection rule: a cell a spreadsheet would read as a formula starts with a quote.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value: Any) -> str:
    """One exported cell: text as it is, unless a spreadsheet would run it (then ``'`` first)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        value = TAG_SEPARATOR.join(value)
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def _lines(rows: Iterable[Iterable[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(rows)
    return buffer.getvalue()


async def export_csv(db: Database, account_id: str) -> AsyncIterator[str]:
    """The account's contacts as CSV text, a header row first, newest first, page by page."""
    yield _lines([COLUMNS])
    async for page in domain.every_contact(db, account_id):
        yield _lines([cell(contact[name]) for name in COLUMNS] for contact in page)


def uncell(text: str) -> str:
    """An exported cell's text as it was (the export's quote before a formula character off)."""
    if text.startswith("'") and text[1:].startswith(_FORMULA_STARTS):
        return text[1:]
    return text


IMPORTED_COLUMNS = tuple(name for name in COLUMNS if name not in ("id", "created_at", "updated_at"))
"""The columns an import reads; the export's others (id, timestamps) are ignored."""
_BOOLEANS = {"true": True, "false": False}


def read_csv(text: str, *, max_rows: int) -> list[dict[str, Any]]:
    """A CSV file (the export's, or any with a header row naming contact fields) as bulk rows:
    an empty cell leaves its field as it is, ``tags`` split on ``;``, ``true``/``false`` as
    booleans; whatever else a cell holds goes to the row's validation as it is."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        raise ValidationFailed.for_field("file", "the file is empty")
    names = [name.strip().lower() for name in header]
    wanted = [(at, name) for at, name in enumerate(names) if name in IMPORTED_COLUMNS]
    if not wanted:
        expected = ", ".join(IMPORTED_COLUMNS)
        raise ValidationFailed.for_field("file", f"the header row names none of: {expected}")
    rows = [_row(cells, wanted) for cells in reader if any(cell.strip() for cell in cells)]
    if len(rows) > max_rows:
        raise ValidationFailed.for_field("file", f"at most {max_rows} rows at a time")
    return rows


def _row(cells: list[str], wanted: list[tuple[int, str]]) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for at, name in wanted:
        text = uncell(cells[at].strip()) if at < len(cells) else ""
        if text:
            row[name] = _value(name, text)
    return row


def _value(name: str, text: str) -> Any:
    if name == "tags":
        return [tag.strip() for tag in text.split(TAG_SEPARATOR) if tag.strip()]
    if name == "do_not_call":
        return _BOOLEANS.get(text.lower(), text)
    return text
