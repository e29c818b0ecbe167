"""``GET /v1/event-types`` and the OpenAPI 3.1 ``webhooks``: both from ``schemas.catalogue``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI
from pydantic import BaseModel, Field

from hookline.api.deps import DB, AnyKey
from hookline.api.openapi import error_responses
from hookline.api.responses import JSONResponse
from hookline.api.routing import DirectRoute
from hookline.domain import call_schemas
from hookline.schemas import catalogue

router = APIRouter(prefix="/v1/event-types", tags=["events"], route_class=DirectRoute)


class EventTypeDoc(BaseModel):
    type: str
    description: str
    schema_: dict[str, Any] = Field(
        alias="schema", description="JSON Schema 2020-12 of the whole delivered body."
    )
    thin_schema: dict[str, Any] = Field(
        description='JSON Schema 2020-12 of the body a webhook with `payload: "thin"` receives.'
    )


@router.get(
    "",
    response_model=list[EventTypeDoc],
    responses=error_responses(401),
    summary="The event types and the JSON Schema (2020-12) of each one's delivered body",
    description="Every type a webhook may receive: the subscribable ones, `webhook.test` and "
    "`webhook.conformance`. Any valid key may read it. `thin_schema` is the body a webhook "
    'with `payload: "thin"` receives. '
    "The same bodies are in this document's "
    "`webhooks`; here, the bodies that carry a call describe `data.analysis.outcome` by the "
    "account's current call analysis schema.",
)
async def list_event_types(auth: AnyKey, db: DB) -> JSONResponse:
    async with db.read() as conn:
        outcome = await call_schemas.current_schema(conn, auth.account_id)
    return JSONResponse(catalogue.event_types_out(outcome["schema"]))


def add_webhooks_to_openapi(app: FastAPI) -> None:
    """Wrap ``app.openapi`` so the document also carries each type's body under ``webhooks``."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = build()
        names, components = catalogue.openapi_components()
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        for name, schema in components.items():
            schemas.setdefault(name, schema)  # a data model the API already documents is kept
        document["webhooks"] = {
            kind.event_type: _webhook_operation(kind, names[kind.event_type])
            for kind in catalogue.catalogue()
        }
        app.openapi_schema = document
        return document

    app.openapi = openapi  # type: ignore[method-assign]


def _webhook_operation(kind: catalogue.EventKind, component: str) -> dict[str, Any]:
    return {
        "post": {
            "summary": kind.event_type,
            "description": kind.description
            + " Signed with Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, "
            "`webhook-signature`).",
            "operationId": f"webhook_{kind.event_type.replace('.', '_')}",
            "tags": ["webhook events"],
            "requestBody": {
                "required": True,
                "description": 'The full body, or the thin one (`payload: "thin"`); '
                "`redact` paths are left out of the full one.",
                "content": {
                    "application/json": {
                        "schema": {
                            "oneOf": [
                                {"$ref": f"#/components/schemas/{component}"},
                                {"$ref": "#/components/schemas/ThinEvent"},
                            ]
                        }
                    }
                },
            },
            "responses": {
                "2XX": {"description": "Received: any 2xx within 15 s is a success."},
                "410": {"description": "Gone: hookline disables the webhook."},
            },
        }
    }
