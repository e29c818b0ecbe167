"""An account's call analysis schema: the JSON Schema of a call's structured outcome
(``PUT /v1/call-analysis-schema``), versioned, and the outcomes validated against it.

Only a small, safe subset of JSON Schema is accepted (``KEYWORDS``), bounded in depth, in
properties and in size, so that validating an outcome is cheap and every field is addressable
by a CEL filter (``event.data.analysis.outcome.budget``). Validation itself is the
``jsonschema`` package's, after our own check of the subset.
"""

from __future__ import annotations

from typing import Any

import orjson
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.exceptions import ValidationError as OutcomeError

from hookline.errors import ValidationFailed
from hookline.storage.db import Connection, fetch_one
from hookline.storage.queries import accounts as account_queries
from hookline.storage.queries import call_schemas as queries
from hookline.timeutil import iso, utcnow

TYPES = ("object", "string", "number", "integer", "boolean", "array")
# Which keywords each type takes; ``type``, ``enum`` and ``description`` go with any.
_BY_TYPE = {
    "object": {"properties", "required", "additionalProperties"},
    "array": {"items", "maxItems"},
    "string": {"minLength", "maxLength"},
    "number": {"minimum", "maximum"},
    "integer": {"minimum", "maximum"},
    "boolean": set(),
}
_ANY_TYPE = {"type", "enum", "description"}
KEYWORDS = frozenset(_ANY_TYPE.union(*_BY_TYPE.values()))
MAX_DEPTH = 5
"""Nesting of ``properties`` and ``items`` below the root object."""
MAX_PROPERTIES = 100
"""Properties in the whole schema."""
MAX_SCHEMA_BYTES = 16 * 1024
MAX_OUTCOME_BYTES = 16 * 1024
MAX_ENUM = 100
MAX_DESCRIPTION = 1000
MAX_COUNT = 1_000_000
"""The largest ``minLength``/``maxLength``/``maxItems``."""
# A property name CEL can address with a dot and a receiver can use as an identifier.
_NAME_FIRST = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_NAME_REST = _NAME_FIRST | frozenset("0123456789")
MAX_NAME = 64
MAX_MESSAGE = 200
MAX_ERRORS = 20


class _Refusal(Exception):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def _join(path: str, part: str) -> str:
    return f"{path}.{part}" if path else part


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT


def _is_name(value: str) -> bool:
    return (
        0 < len(value) <= MAX_NAME
        and value[0] in _NAME_FIRST
        and all(char in _NAME_REST for char in value)
    )


class _SubsetCheck:
    """Walks a schema, refusing the first keyword or value outside the subset."""

    def __init__(self) -> None:
        self.properties = 0

    def node(self, node: Any, path: str, depth: int) -> None:
        if not isinstance(node, dict):
            raise _Refusal(path or "schema", "must be a JSON Schema object")
        for keyword in node:
            if keyword not in KEYWORDS:
                raise _Refusal(_join(path, keyword), f"keyword {keyword!r} is not supported")
        kind = node.get("type")
        if kind not in TYPES:
            raise _Refusal(_join(path, "type"), f"type must be one of {', '.join(TYPES)}")
        for keyword in node:
            if keyword not in _ANY_TYPE and keyword not in _BY_TYPE[kind]:
                raise _Refusal(
                    _join(path, keyword), f"keyword {keyword!r} does not apply to type {kind!r}"
                )
        self._values(node, kind, path)
        if kind == "object":
            self._object(node, path, depth)
        elif kind == "array" and "items" in node:
            self._nested(node["items"], _join(path, "items"), depth)

    def _nested(self, node: Any, path: str, depth: int) -> None:
        if depth >= MAX_DEPTH:
            raise _Refusal(path, f"schemas may nest at most {MAX_DEPTH} levels")
        self.node(node, path, depth + 1)

    def _object(self, node: dict[str, Any], path: str, depth: int) -> None:
        properties = node.get("properties", {})
        if not isinstance(properties, dict):
            raise _Refusal(_join(path, "properties"), "properties must be an object")
        for name, child in properties.items():
            where = _join(_join(path, "properties"), name)
            if not _is_name(name):
                raise _Refusal(
                    where,
                    f"property names are 1..{MAX_NAME} letters, digits and _, "
                    "not starting with a digit",
                )
            self.properties += 1
            if self.properties > MAX_PROPERTIES:
                raise _Refusal(where, f"a schema has at most {MAX_PROPERTIES} properties")
            self._nested(child, where, depth)
        required = node.get("required", [])
        if not (isinstance(required, list) and all(isinstance(n, str) for n in required)):
            raise _Refusal(_join(path, "required"), "required must be an array of names")
        missing = [name for name in required if name not in properties]
        if missing or len(set(required)) != len(required):
            raise _Refusal(
                _join(path, "required"), "required names each property of properties once"
            )
        if not isinstance(node.get("additionalProperties", False), bool):
            raise _Refusal(
                _join(path, "additionalProperties"), "additionalProperties must be true or false"
            )

    def _values(self, node: dict[str, Any], kind: str, path: str) -> None:
        for keyword in ("minimum", "maximum"):
            if keyword in node and not _is_number(node[keyword]):
                raise _Refusal(_join(path, keyword), f"{keyword} must be a number")
        for keyword in ("minLength", "maxLength", "maxItems"):
            if keyword in node and not _is_count(node[keyword]):
                raise _Refusal(
                    _join(path, keyword), f"{keyword} must be an integer in 0..{MAX_COUNT}"
                )
        description = node.get("description", "")
        if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
            raise _Refusal(
                _join(path, "description"), f"description is text of ..{MAX_DESCRIPTION} chars"
            )
        if "enum" in node:
            self._enum(node["enum"], kind, _join(path, "enum"))

    @staticmethod
    def _enum(values: Any, kind: str, path: str) -> None:
        if not (isinstance(values, list) and 0 < len(values) <= MAX_ENUM):
            raise _Refusal(path, f"enum must be an array of 1..{MAX_ENUM} values")
        check = Draft202012Validator({"type": kind})
        if kind in ("object", "array") or not all(check.is_valid(v) for v in values):
            raise _Refusal(path, f"enum values must be scalars of type {kind!r}")


def check_schema(schema: dict[str, Any]) -> None:
    """422 naming the first keyword (as a path into the schema) outside the subset."""
    try:
        size = len(orjson.dumps(schema))
    except orjson.JSONEncodeError:
        raise ValidationFailed.for_field("schema", "the schema is not storable JSON") from None
    if size > MAX_SCHEMA_BYTES:
        raise ValidationFailed.for_field(
            "schema", f"the schema must be at most {MAX_SCHEMA_BYTES // 1024} KiB as JSON"
        )
    if schema.get("type") != "object":
        raise ValidationFailed.for_field("type", 'the outcome is an object: "type": "object"')
    try:
        _SubsetCheck().node(schema, "", 0)
    except _Refusal as refusal:
        raise ValidationFailed.for_field(refusal.path, refusal.message) from None
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        raise ValidationFailed.for_field("schema", _short(error.message)) from None


def schema_out(row: Any) -> dict[str, Any]:
    if row is None:
        return {"version": None, "schema": None, "created_at": None}
    return {"version": row.version, "schema": row.schema, "created_at": iso(row.created_at)}


async def current_schema(conn: Connection, account_id: str) -> dict[str, Any]:
    """``{"version", "schema", "created_at"}``, each null when the account has none."""
    return schema_out(await fetch_one(conn, queries.CURRENT, {"account_id": account_id}))


async def schema_version(conn: Connection, account_id: str, version: int) -> dict[str, Any] | None:
    row = await fetch_one(conn, queries.BY_VERSION, {"account_id": account_id, "version": version})
    return schema_out(row) if row is not None else None


async def put_schema(conn: Connection, account_id: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Store ``schema`` as the account's next version (outcomes stored before keep theirs)."""
    check_schema(schema)
    # Held until the transaction ends, so two PUTs never take the same version number.
    await conn.execute(account_queries.LOCK, {"account_id": account_id})
    latest = await conn.scalar(queries.LATEST_VERSION, {"account_id": account_id})
    row = {
        "account_id": account_id,
        "version": (latest or 0) + 1,
        "schema": schema,
        "created_at": utcnow(),
    }
    return schema_out((await conn.execute(queries.INSERT, row)).one())


def _short(message: str) -> str:
    # jsonschema's messages quote the value, which may be long.
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 3] + "..."


def _error_field(error: OutcomeError, prefix: str) -> str:
    path = prefix
    for part in error.absolute_path:
        path = _join(path, str(part))
    if error.validator == "required" and isinstance(error.instance, dict):
        required: list[str] = list(error.validator_value)  # type: ignore[arg-type]
        missing = [n for n in required if n not in error.instance]
        path = _join(path, missing[0]) if missing else path
    return path or "body"


async def validated_outcome(
    conn: Connection, account_id: str, outcome: dict[str, Any], prefix: str
) -> dict[str, Any]:
    """``outcome`` checked against the account's current schema (422 naming each field's path
    under ``prefix``): the ``outcome`` and ``outcome_schema_version`` an analysis stores. An
    account without a schema takes any object (version null)."""
    try:
        size = len(orjson.dumps(outcome))
    except orjson.JSONEncodeError:
        raise ValidationFailed.for_field(prefix or "body", "not storable JSON") from None
    if size > MAX_OUTCOME_BYTES:
        raise ValidationFailed.for_field(
            prefix or "body", f"the outcome must be at most {MAX_OUTCOME_BYTES // 1024} KiB"
        )
    current = await current_schema(conn, account_id)
    if current["schema"] is not None:
        validator = Draft202012Validator(current["schema"])
        errors = sorted(
            validator.iter_errors(outcome), key=lambda e: [str(p) for p in e.absolute_path]
        )
        if errors:
            raise ValidationFailed(
                [
                    {"field": _error_field(e, prefix), "message": _short(e.message)}
                    for e in errors[:MAX_ERRORS]
                ]
            )
    return {"outcome": outcome, "outcome_schema_version": current["version"]}
