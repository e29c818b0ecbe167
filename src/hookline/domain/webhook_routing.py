"""A webhook's routing options: custom ``headers``, a CEL ``filter`` and a ``rate_limit``.

Headers are stored encrypted (``crypto.SecretBox``, like the signing secrets: a gateway's static
key is a credential), with their names in clear so that every read shows them, each value masked
as ``MASKED_VALUE``, without decrypting. Names are compared case-insensitively, as HTTP does: a
PATCH of ``x-api-key`` replaces ``X-Api-Key``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import orjson

from hookline.crypto import SecretBox
from hookline.delivery.signing import headers_from_plain

MAX_HEADERS = 20
MAX_HEADER_VALUE = 1024
MAX_HEADER_NAME = 256
MASKED_VALUE = "********"
MIN_RATE_LIMIT, MAX_RATE_LIMIT = 1, 10_000
# What hookline sets itself on every delivery (or the HTTP client does): never overridable.
RESERVED_HEADERS = frozenset(
    {"content-type", "content-length", "host", "user-agent", "connection", "transfer-encoding"}
)
RESERVED_PREFIX = "webhook-"
# RFC 9110 token characters.
_TOKEN = re.compile(r"\A[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
# Field values: visible characters, spaces and tabs; no CR/LF (header injection) or other controls.
_BAD_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def reserved_name_pattern() -> str:
    """An ECMA-262 regex matching the reserved names in any case, for the OpenAPI schema (JSON
    Schema patterns have no case-insensitive flag, so each letter is spelled as a class)."""

    def any_case(text: str) -> str:
        # The reserved names hold only letters and "-", which needs no escape (and "\\-" is a
        # syntax error in a Unicode-mode ECMA-262 regex).
        return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in text)

    exact = "|".join(any_case(name) for name in sorted(RESERVED_HEADERS))
    return f"^(?:{any_case(RESERVED_PREFIX)}|(?:{exact})$)"


def check_header_name(name: str) -> None:
    if not _TOKEN.match(name) or len(name) > MAX_HEADER_NAME:
        raise ValueError(f"header name {name!r} is not an HTTP token (RFC 9110)")
    lowered = name.lower()
    if lowered in RESERVED_HEADERS or lowered.startswith(RESERVED_PREFIX):
        raise ValueError(f"header {name} is set by hookline and cannot be overridden")


def check_header(name: str, value: str) -> None:
    check_header_name(name)
    if len(value) > MAX_HEADER_VALUE:
        raise ValueError(f"header {name}'s value must be at most {MAX_HEADER_VALUE} characters")
    if _BAD_VALUE.search(value):
        raise ValueError(f"header {name}'s value must not contain CR, LF or control characters")


def _check_count(names: Iterable[str]) -> None:
    if len(list(names)) > MAX_HEADERS:
        raise ValueError(f"headers may hold at most {MAX_HEADERS} headers")


def _check_unique(names: Iterable[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            raise ValueError(f"header {name} is given twice (names are case-insensitive)")
        seen.add(name.lower())


def normalize_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """A whole ``headers`` object (create): each header valid, names unique, at most 20."""
    for name, value in headers.items():
        check_header(name, value)
    _check_unique(headers)
    _check_count(headers)
    return dict(headers)


def normalize_header_patch(patch: Mapping[str, str | None]) -> dict[str, str | None]:
    """A PATCH's ``headers``: each set header valid (``null`` removes one)."""
    for name, value in patch.items():
        if value is None:
            check_header_name(name)  # as the schema says: a reserved name is refused, even here
        else:
            check_header(name, value)
    _check_unique(patch)
    return dict(patch)


def merge_headers(current: Mapping[str, str], patch: Mapping[str, str | None]) -> dict[str, str]:
    """``current`` with ``patch`` merged in (``null`` removes; names case-insensitive)."""
    patched = {name.lower() for name in patch}
    merged = {name: value for name, value in current.items() if name.lower() not in patched}
    merged.update({name: value for name, value in patch.items() if value is not None})
    _check_count(merged)
    return merged


def masked(names: Iterable[str] | None) -> dict[str, str]:
    return {name: MASKED_VALUE for name in names or ()}


def seal(box: SecretBox, headers: Mapping[str, str]) -> tuple[str | None, list[str] | None]:
    """The stored form: (encrypted JSON, names), both None when there are no headers."""
    if not headers:
        return None, None
    return box.encrypt(orjson.dumps(dict(headers)).decode()), list(headers)


def unseal(box: SecretBox, token: str | None) -> dict[str, str]:
    return headers_from_plain(box.decrypt(token)) if token is not None else {}
