"""What one webhook receives of an event: the body with its ``redact`` paths removed, or the
thin body (``payload: "thin"``: the event's ids and a URL to fetch the object).

Applied to the signed bytes' source, before signing: the signature covers exactly what is
sent. A webhook without either gets the shared body untouched (``shape_of`` is None).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

THIN = "thin"
FULL = "full"
DATA_PREFIX = "data."
# Where each type's object is read in the API: (its path template, the data field of its id).
_OBJECT_PATHS = {
    "contact": ("/v1/contacts/{id}", "id"),
    "call": ("/v1/calls/{id}", "id"),
    "lead": ("/v1/calls/{id}", "id"),
    "appointment": ("/v1/calls/{id}", "id"),
    "webhook": ("/v1/webhooks/{id}", "id"),
}
# Types whose object is not the data's own id.
_OBJECT_OF_TYPE = {
    "webhook.test": ("/v1/webhooks/{id}", "webhook_id"),
    "webhook.conformance": ("/v1/webhooks/{id}", "webhook_id"),
    "contact.erased": ("/v1/contacts/{id}", "contact_id"),
}


@dataclass(frozen=True)
class BodyShape:
    redact: tuple[tuple[str, ...], ...]
    """Each path's keys below ``data``."""
    thin: bool
    api_url: str
    """The server's public URL, which thin bodies' object URLs start with."""


def shape_of(redact: Sequence[str] | None, payload: str | None, api_url: str) -> BodyShape | None:
    """A webhook's shape, or None when it receives the full body as it is."""
    thin = payload == THIN
    if not thin and not redact:
        return None
    keys = tuple(tuple(path.removeprefix(DATA_PREFIX).split(".")) for path in redact or ())
    return BodyShape(keys, thin, api_url.rstrip("/"))


def shaped(body: bytes, shape: BodyShape | None) -> bytes:
    """``body`` (``signing.event_body``'s) as the webhook receives it."""
    if shape is None:
        return body
    payload = orjson.loads(body)
    if shape.thin:
        return orjson.dumps(thin_payload(payload, shape.api_url))
    for keys in shape.redact:
        _drop(payload.get("data"), keys)
        # A changed field's old value is as personal as its new one.
        _drop(payload.get("previous_attributes"), keys)
    return orjson.dumps(payload)


def _drop(node: Any, keys: tuple[str, ...]) -> None:
    for key in keys[:-1]:
        if not isinstance(node, dict):
            return
        node = node.get(key)
    if isinstance(node, dict):
        node.pop(keys[-1], None)


def thin_payload(payload: dict[str, Any], api_url: str) -> dict[str, Any]:
    """The envelope and ``data: {"id", "url"}``: the object's id and where to read it now."""
    event_type = str(payload["type"])
    data = payload.get("data") or {}
    if event_type == "delivery.exhausted":
        path = f"/v1/webhooks/{data['webhook_id']}/deliveries/{data['id']}"
        object_id = data["id"]
    else:
        template, field = _OBJECT_OF_TYPE.get(event_type) or _OBJECT_PATHS[event_type.split(".")[0]]
        object_id = data[field]
        path = template.format(id=object_id)
    return {
        "id": payload["id"],
        "type": event_type,
        "timestamp": payload["timestamp"],
        "data": {"id": object_id, "url": api_url + path},
    }
