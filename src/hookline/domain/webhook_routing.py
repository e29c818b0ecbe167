"""A webhook's routing options: custom ``headers``, a CEL ``filter`` and a ``rate_limit``.

Headers are stored encrypted (``crypto.SecretBox``, like the signing secrets: a gateway's static
key is a credential), with their names in clear so that every read shows them, each value masked
as ``MASKED_VALUE``, without decrypting. Names are compared case-insensitively, as HTTP does: a
PATCH of ``x-api-key`` replaces ``X-Api-Key``. Which headers may be set is
``delivery.header_rules``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import orjson

from hookline.crypto import SecretBox
from hookline.delivery import header_rules as rules
from hookline.delivery.signing import headers_from_plain, stored_headers_from_plain

MAX_HEADERS = 20
MIN_RATE_LIMIT, MAX_RATE_LIMIT = 1, 10_000


def check_removable_name(name: str) -> None:
    """A PATCH's ``null``: a name a webhook may hold, or may have been stored with before a
    rule refused it (so that it can be removed); never a reserved one."""
    refused = rules.storable_name_refusal(name)
    if refused is not None:
        raise ValueError(refused)


def check_header(name: str, value: str) -> None:
    refused = rules.refusal(name, value)
    if refused is not None:
        raise ValueError(refused)


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
            check_removable_name(name)
        else:
            check_header(name, value)
    _check_unique(patch)
    return dict(patch)


def merge_headers(current: Mapping[str, str], patch: Mapping[str, str | None]) -> dict[str, str]:
    """``current`` with ``patch`` merged in (``null`` removes; names case-insensitive). A
    stored header the rules now refuse (never sent anyway) is dropped by any merge."""
    patched = {name.lower() for name in patch}
    kept = rules.sendable(current)
    merged = {name: value for name, value in kept.items() if name.lower() not in patched}
    merged.update({name: value for name, value in patch.items() if value is not None})
    _check_count(merged)
    return merged


def seal(box: SecretBox, headers: Mapping[str, str]) -> tuple[str | None, list[str] | None]:
    """The stored form: (encrypted JSON, names), both None when there are no headers."""
    if not headers:
        return None, None
    return box.encrypt(orjson.dumps(dict(headers)).decode()), list(headers)


def unseal(box: SecretBox, token: str | None) -> dict[str, str]:
    """The headers to send: the stored ones the rules accept."""
    return headers_from_plain(box.decrypt(token)) if token is not None else {}


def unseal_stored(box: SecretBox, token: str | None) -> dict[str, str]:
    """Every stored header, sent or not."""
    return stored_headers_from_plain(box.decrypt(token)) if token is not None else {}


def unsent_names(names: Iterable[str]) -> list[str]:
    """The stored names the rules refuse by name: kept until the next headers PATCH, never
    sent (a refused value is only found by decrypting, at send time)."""
    return [name for name in names if rules.name_refusal(name) is not None]
