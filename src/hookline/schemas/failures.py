"""A model's validation errors as the contract words them: 400 for a body that is not a JSON
object, otherwise 422 naming each field. The API's error handler and the dashboard's forms
(which validate with the same schemas) share it, so both say the same thing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hookline.delivery.endpoint_auth import MTLS, OAUTH2
from hookline.errors import ApiError, InvalidJSON, ValidationFailed
from hookline.schemas.common import READ_ONLY_FIELDS


def _field_name(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    # Pydantic puts the failing validator's type (e.g. "function-after[...]") in the location,
    # and the member of a union (``bool | None``: "bool", "none") that failed, or the tag of a
    # tagged union's member (``auth``'s type).
    parts = [p for p in parts if "[" not in p and p not in _UNION_MEMBERS]
    return ".".join(parts) or "body"


_UNION_MEMBERS = frozenset({"str", "int", "float", "bool", "none", "list", "dict", OAUTH2, MTLS})


def _field_message(error: Mapping[str, Any], field: str) -> str:
    kind = error.get("type", "")
    if kind == "extra_forbidden":
        top = field.split(".")[0]
        if top in READ_ONLY_FIELDS:
            return f"{field} is read-only and cannot be set"
        return f"{field} is not a known field"
    if kind == "missing":
        return f"{field} is required"
    message = str(error.get("msg", "is not valid"))
    if kind == "value_error":
        # Our validators already name the field: "phone_number must be E.164, ...".
        return message.removeprefix("Value error, ")
    return f"{field}: {message[0].lower()}{message[1:]}" if message else f"{field} is not valid"


def validation_failure(errors: Iterable[Mapping[str, Any]]) -> ApiError:
    """The error for pydantic's (or FastAPI's) list of validation ``errors``."""
    errors = list(errors)
    for error in errors:
        if error.get("type") == "json_invalid":
            return InvalidJSON("The request body is not valid JSON.")
        loc = tuple(error.get("loc", ()))
        if loc == ("body",) and error.get("type") in (
            "model_attributes_type",
            "model_type",
            "dict_type",
            "missing",
        ):
            return InvalidJSON("The request body must be a JSON object.")
    fields: dict[str, dict[str, str]] = {}
    for error in errors:
        field = _field_name(tuple(error.get("loc", ())))
        # A union's members each fail; the first (the documented type, not null) says why.
        fields.setdefault(field, {"field": field, "message": _field_message(error, field)})
    return ValidationFailed(list(fields.values()))
