"""Contacts as CSV: the export's columns and cells (the API's ``GET /v1/contacts/export`` and the
dashboard's download), and the import's reading of them back into rows for the bulk upsert."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator, Iterable
from typing import Any

from hookline.domain import contacts as domain
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
