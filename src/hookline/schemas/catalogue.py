"""The event-type catalogue: every type's delivered body as a pydantic model, one source for
``GET /v1/event-types`` (a JSON Schema 2020-12 per type), the OpenAPI 3.1 ``webhooks`` and the
example events that ``POST /v1/webhooks/{id}/test {"event_type": T}`` sends.

A body is ``{"id", "type", "timestamp", "data"}`` (``contact.updated`` adds
``previous_attributes``), exactly as ``delivery.signing.event_body`` writes it. The schemas
do not forbid additional properties: a field added later must not break a receiver that
validates with them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.json_schema import models_json_schema

from hookline.delivery.signing import EVENTS_WITH_PREVIOUS_ATTRIBUTES
from hookline.domain.events import EVENT_TYPES
from hookline.errors import ValidationFailed
from hookline.schemas.calls import CallOut
from hookline.schemas.common import RequestModel
from hookline.schemas.contacts import ContactOut
from hookline.schemas.deliveries import DeliveryOut
from hookline.schemas.webhooks import WebhookOut

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
TEST_EVENT_TYPE = "webhook.test"
CONFORMANCE_EVENT_TYPE = "webhook.conformance"
# duplicate_id resends the valid probe's request: its body says "valid".
ConformanceProbe = Literal["valid", "bad_signature", "stale_timestamp", "tampered_body"]


class WebhookTestData(BaseModel):
    webhook_id: str
    message: str


class WebhookConformanceData(BaseModel):
    webhook_id: str
    probe: ConformanceProbe = Field(description="Which check of the receiver this request is.")
    message: str


class ContactErasedData(BaseModel):
    contact_id: str = Field(description="The erased contact's id.")
    event_ids: list[str] = Field(
        description="The events about the contact (or its calls) this webhook received: delete "
        "what you stored from them. hookline has deleted them."
    )


class DisabledWebhook(WebhookOut):
    """The webhook, masked, as the webhooks API shows it; ``disabled_reason`` says why."""


@dataclass(frozen=True)
class EventKind:
    event_type: str
    description: str
    data_model: type[BaseModel]
    example: dict[str, Any]


_EXAMPLE_CONTACT: dict[str, Any] = {
    "id": "019a0000-0000-7000-8000-000000000001",
    "first_name": "Ada",
    "last_name": "Example",
    "phone_number": "+14155552671",
    "email": "ada@example.com",
    "company": "Example Inc.",
    "tags": ["example"],
    "notes": "An example contact sent by POST /v1/webhooks/{id}/test.",
    "do_not_call": False,
    "do_not_call_reason": None,
    "created_at": "2026-01-01T10:00:00.000Z",
    "updated_at": "2026-01-01T10:05:00.000Z",
}
_EXAMPLE_CALL: dict[str, Any] = {
    "id": "call-019a0000-0000-7000-8000-000000000002",
    "contact_id": _EXAMPLE_CONTACT["id"],
    "call_type": "inbound",
    "customer_phone_number": "+14155552671",
    "call_status": "completed",
    "call_started_at": "2026-01-01T10:00:00.000Z",
    "call_ended_at": "2026-01-01T10:03:21.000Z",
    "duration_seconds": 201,
    "metadata": {"example": True},
    "analysis": {
        "assistant_id": "asst_example",
        "transcript": "Agent: Hello!\nCaller: I'd like a demo next Tuesday.",
        "summary": "Wants a demo next Tuesday.",
        "recording_url": "https://recordings.example.com/example.mp3",
        "intent": "book_demo",
        "lead_qualification": "qualified",
        "appointment_booked": True,
        "cost": "0.42",
        "outcome": None,
        "outcome_schema_version": None,
    },
    "created_at": "2026-01-01T10:00:00.000Z",
    "updated_at": "2026-01-01T10:03:21.000Z",
}
_ANALYZED_CALL = {
    **_EXAMPLE_CALL,
    "analysis": {
        **_EXAMPLE_CALL["analysis"],
        "outcome": {"budget": 5000, "decision_maker": True},
        "outcome_schema_version": 1,
    },
}
_STARTED_CALL = {
    **_EXAMPLE_CALL,
    "call_status": "in-progress",
    "call_ended_at": None,
    "duration_seconds": None,
    "analysis": None,
    "updated_at": _EXAMPLE_CALL["created_at"],
}
_EXAMPLE_WEBHOOK: dict[str, Any] = {
    "id": "wh-019a0000-0000-7000-8000-000000000003",
    "url": "https://hooks.example.com/hookline",
    "name": "Example",
    "events": ["contact.created"],
    "is_active": False,
    "secret": "whsec_********",
    "signing": "hmac",
    "public_key": None,
    "auth": {
        "type": "oauth2_client_credentials",
        "token_url": "https://auth.example.com/oauth/token",
        "client_id": "hookline",
        "client_secret": "********",
        "scope": None,
    },
    "disabled_reason": "The endpoint answered 410 Gone.",
    "headers": {"X-Api-Key": "********"},
    "filter": None,
    "rate_limit": None,
    "redact": [],
    "payload": "full",
    "created_at": "2026-01-01T10:00:00.000Z",
    "updated_at": "2026-01-01T10:00:00.000Z",
}
_EXAMPLE_DELIVERY: dict[str, Any] = {
    "id": "dlv_019a0000000070008000000000000004",
    "webhook_id": _EXAMPLE_WEBHOOK["id"],
    "event_id": "evt_019a0000000070008000000000000005",
    "event_type": "contact.created",
    "status": "failed",
    "attempts": 8,
    "last_status_code": 500,
    "last_error": "HTTP 500",
    "next_attempt_at": None,
    "created_at": "2026-01-01T10:00:00.000Z",
    "updated_at": "2026-01-02T13:00:00.000Z",
}

# Every type hookline may deliver. Types not (yet) in EVENT_TYPES are left out of the catalogue
# (``catalogue()``), so this table can describe a type before it is subscribable.
_KINDS = (
    EventKind("contact.created", "A contact was created.", ContactOut, _EXAMPLE_CONTACT),
    EventKind(
        "contact.updated",
        "A contact changed; `previous_attributes` holds the changed fields' old values.",
        ContactOut,
        _EXAMPLE_CONTACT,
    ),
    EventKind(
        "contact.deleted",
        "A contact was deleted (data: it as it was).",
        ContactOut,
        _EXAMPLE_CONTACT,
    ),
    EventKind(
        "contact.erased",
        "A contact was erased (POST /v1/contacts/{id}/erase): sent to every webhook that "
        "received data about it, subscribed or not; carries no personal data.",
        ContactErasedData,
        {
            "contact_id": _EXAMPLE_CONTACT["id"],
            "event_ids": ["evt_019a0000000070008000000000000005"],
        },
    ),
    EventKind("call.started", "A call started.", CallOut, _STARTED_CALL),
    EventKind(
        "call.completed",
        "A call ended, whatever its final `call_status` (`completed`, `failed`, `no-answer`, "
        "`busy`, `canceled`, or `timed-out` when the server ended it at the account's "
        "`max_call_seconds`); fired exactly once per call; carries its `analysis` when reported.",
        CallOut,
        _EXAMPLE_CALL,
    ),
    EventKind(
        "lead.qualified",
        "A call completed with `analysis.lead_qualification` = `qualified` (data: the call).",
        CallOut,
        _EXAMPLE_CALL,
    ),
    EventKind(
        "appointment.booked",
        "A call completed with `analysis.appointment_booked` = true (data: the call).",
        CallOut,
        _EXAMPLE_CALL,
    ),
    EventKind(
        "call.analyzed",
        "A call's structured outcome was recorded (with its completion, after `call.completed`, "
        "or by POST /v1/calls/{id}/analysis): `analysis.outcome`, valid against the account's "
        "call analysis schema version `analysis.outcome_schema_version` (data: the call).",
        CallOut,
        _ANALYZED_CALL,
    ),
    EventKind(
        "webhook.disabled",
        "hookline disabled a webhook (410 Gone, or failing for HOOKLINE_DISABLE_AFTER_HOURS); "
        "never delivered to that webhook.",
        DisabledWebhook,
        _EXAMPLE_WEBHOOK,
    ),
    EventKind(
        "delivery.exhausted",
        "A delivery's last attempt failed (data: the delivery as in the deliveries API).",
        DeliveryOut,
        _EXAMPLE_DELIVERY,
    ),
    EventKind(
        TEST_EVENT_TYPE,
        "Sent by POST /v1/webhooks/{id}/test to that webhook alone; not subscribable.",
        WebhookTestData,
        {
            "webhook_id": _EXAMPLE_WEBHOOK["id"],
            "message": "This is a test event sent from hookline.",
        },
    ),
    EventKind(
        CONFORMANCE_EVENT_TYPE,
        "A probe of POST /v1/webhooks/{id}/conformance (the receiver check); not a delivery, "
        "not subscribable.",
        WebhookConformanceData,
        {
            "webhook_id": _EXAMPLE_WEBHOOK["id"],
            "probe": "valid",
            "message": "A receiver check from hookline.",
        },
    ),
)
_EXAMPLE_PREVIOUS_ATTRIBUTES = {"company": "Old Name Ltd.", "tags": []}


def catalogue() -> list[EventKind]:
    """The deliverable types: the subscribable ones, then webhook.test and webhook.conformance."""
    published = {*EVENT_TYPES, TEST_EVENT_TYPE, CONFORMANCE_EVENT_TYPE}
    return [kind for kind in _KINDS if kind.event_type in published]


def kind_of(event_type: str) -> EventKind | None:
    return next((kind for kind in catalogue() if kind.event_type == event_type), None)


def example_previous_attributes(event_type: str) -> dict[str, Any] | None:
    return _EXAMPLE_PREVIOUS_ATTRIBUTES if event_type in EVENTS_WITH_PREVIOUS_ATTRIBUTES else None


def _model_name(event_type: str) -> str:
    """``contact.created`` -> ``ContactCreatedEvent``."""
    words = event_type.replace(".", "_").split("_")
    return "".join(word.capitalize() for word in words) + "Event"


@functools.cache
def body_model(event_type: str) -> type[BaseModel]:
    """The delivered body of ``event_type`` as a model (its OpenAPI component's name too)."""
    kind = kind_of(event_type)
    assert kind is not None, event_type
    fields: dict[str, Any] = {
        "id": (str, Field(pattern=r"^evt_", description="The `webhook-id` header; dedupe on it.")),
        "type": (Literal[event_type], ...),
        "timestamp": (str, Field(description="When the event happened, ISO 8601 UTC.")),
        "data": (kind.data_model, ...),
    }
    if event_type in EVENTS_WITH_PREVIOUS_ATTRIBUTES:
        fields["previous_attributes"] = (
            dict[str, Any],
            Field(description="The changed fields' values before the change."),
        )
    model: type[BaseModel] = create_model(
        _model_name(event_type),
        __config__=ConfigDict(title=_model_name(event_type)),
        __doc__=kind.description,
        **fields,
    )
    return model


@functools.cache
def body_schema(event_type: str) -> dict[str, Any]:
    """A standalone JSON Schema 2020-12 of ``event_type``'s delivered body. Built once per
    type (a ``redact`` check walks it on a webhook's writes): shared, never to be modified."""
    schema = body_model(event_type).model_json_schema(mode="serialization")
    return {"$schema": JSON_SCHEMA_DIALECT, **schema}


def with_outcome_schema(schema: dict[str, Any], outcome: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (a body carrying a call) with ``data.analysis.outcome`` described by the
    account's call analysis schema ``outcome`` (or null)."""
    analysis = schema["$defs"]["CallAnalysisOut"]
    properties = {**analysis["properties"]}
    properties["outcome"] = {**properties["outcome"], "anyOf": [outcome, {"type": "null"}]}
    defs = {**schema["$defs"], "CallAnalysisOut": {**analysis, "properties": properties}}
    return {**schema, "$defs": defs}


def event_types_out(outcome_schema: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The body of ``GET /v1/event-types``: with ``outcome_schema`` (the account's call
    analysis schema), the bodies that carry a call describe its outcome by it."""
    out = []
    for kind in catalogue():
        schema = body_schema(kind.event_type)
        if outcome_schema is not None and kind.data_model is CallOut:
            schema = with_outcome_schema(schema, outcome_schema)
        out.append(
            {
                "type": kind.event_type,
                "description": kind.description,
                "schema": schema,
                "thin_schema": thin_schema(kind.event_type),
            }
        )
    return out


def openapi_components() -> tuple[dict[str, str], dict[str, Any]]:
    """Each type's component name, and the components (bodies and what they use), for the
    OpenAPI ``webhooks``; ``$ref``s point into ``#/components/schemas``."""
    models = [(body_model(kind.event_type), "serialization") for kind in catalogue()]
    models.append((ThinEvent, "serialization"))
    refs, top = models_json_schema(
        models,  # type: ignore[arg-type]
        ref_template="#/components/schemas/{model}",
    )
    names = {
        kind.event_type: str(refs[(body_model(kind.event_type), "serialization")]["$ref"]).rsplit(
            "/", 1
        )[1]
        for kind in catalogue()
    }
    return names, dict(top.get("$defs", {}))


class TestEventRequest(RequestModel):
    event_type: str = Field(
        description="A type of GET /v1/event-types; its example event is sent.",
        json_schema_extra={"enum": [kind.event_type for kind in catalogue()]},
    )


def _resolved(schema: dict[str, Any], node: dict[str, Any]) -> list[dict[str, Any]]:
    """``node`` and its alternatives (``anyOf``/``oneOf``/``allOf``), ``$ref``s followed."""
    ref = node.get("$ref")
    if isinstance(ref, str):
        node = schema["$defs"][ref.rsplit("/", 1)[1]]
    found = [node]
    for branch in ("anyOf", "oneOf", "allOf"):
        for alternative in node.get(branch, ()):
            found.extend(_resolved(schema, alternative))
    return found


def _free_form(node: dict[str, Any]) -> bool:
    """An object whose keys the catalogue does not name (``metadata``, an outcome)."""
    return node.get("type") == "object" and "properties" not in node


def has_path(event_type: str, path: str) -> bool:
    """Whether ``path`` (``data.x.y``) names a field of ``event_type``'s body: through the
    declared properties, or into an object whose keys are the caller's own."""
    schema = body_schema(event_type)
    nodes = [schema]
    for key in path.split("."):
        found: list[dict[str, Any]] = []
        for node in (alt for n in nodes for alt in _resolved(schema, n)):
            if _free_form(node):
                return True
            if key in node.get("properties", {}):
                found.append(node["properties"][key])
        if not found:
            return False
        nodes = found
    return True


def unknown_redact_paths(paths: list[str], event_types: list[str]) -> list[str]:
    """The ``redact`` paths that none of ``event_types``' bodies has."""
    return [path for path in paths if not any(has_path(t, path) for t in event_types)]


def check_redact_fits(webhook: dict[str, Any]) -> None:
    """422 naming ``redact`` when a path is in none of the webhook's subscribed types; run on
    the stored result in the request's transaction, so a PATCH of ``events`` is checked too."""
    unknown = unknown_redact_paths(webhook["redact"], webhook["events"])
    if unknown:
        raise ValidationFailed.for_field(
            "redact",
            f"redact path(s) {', '.join(unknown)} are in none of the subscribed event types' "
            "bodies (GET /v1/event-types)",
        )


class ThinData(BaseModel):
    id: str = Field(description="The object's id.")
    url: str = Field(description="Where to read the object as it is now (GET with an API key).")


class ThinEvent(BaseModel):
    """The body a webhook with `payload: "thin"` receives, whatever the type: the event's ids
    and where to read its object now."""

    id: str = Field(pattern=r"^evt_", description="The `webhook-id` header; dedupe on it.")
    type: str = Field(description="The event type (GET /v1/event-types).")
    timestamp: str = Field(description="When the event happened, ISO 8601 UTC.")
    data: ThinData


@functools.cache
def thin_schema(event_type: str) -> dict[str, Any]:
    """A standalone JSON Schema 2020-12 of ``event_type``'s thin body (shared, as
    ``body_schema``)."""
    schema = ThinEvent.model_json_schema(mode="serialization")
    properties = {**schema["properties"], "type": {"const": event_type, "type": "string"}}
    return {"$schema": JSON_SCHEMA_DIALECT, **schema, "properties": properties}
