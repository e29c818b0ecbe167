"""``/v1/call-analysis-schema``: the JSON Schema of the account's call outcomes, versioned."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from hookline.api.deps import DB, CallsRead, CallsWrite, JsonContent
from hookline.api.openapi import error_responses
from hookline.api.responses import JSONResponse
from hookline.api.routing import DirectRoute
from hookline.domain import call_schemas as domain
from hookline.errors import NotFound
from hookline.schemas.calls import AnalysisSchemaIn, AnalysisSchemaOut

router = APIRouter(prefix="/v1/call-analysis-schema", tags=["calls"], route_class=DirectRoute)


@router.get(
    "",
    response_model=AnalysisSchemaOut,
    responses=error_responses(401, 403, 404, 422),
    summary="The account's call analysis schema (the current version, or `version`)",
    description="Every field is null while the account has no schema. A `version` the "
    "account never had is a 404.",
)
async def get_call_analysis_schema(
    auth: CallsRead,
    db: DB,
    version: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
) -> JSONResponse:
    async with db.read() as conn:
        if version is None:
            return JSONResponse(await domain.current_schema(conn, auth.account_id))
        found = await domain.schema_version(conn, auth.account_id, version)
    if found is None:
        raise NotFound(f"No call analysis schema version {version}.")
    return JSONResponse(found)


@router.put(
    "",
    response_model=AnalysisSchemaOut,
    responses=error_responses(400, 401, 403, 413, 415, 422),
    summary="Set the account's call analysis schema (a new version)",
    description="The body is the JSON Schema itself, in the subset described in "
    "docs/webhooks.md (anything else is a 422 naming the keyword). Outcomes recorded before "
    "keep the version they were validated against.",
)
async def put_call_analysis_schema(
    auth: CallsWrite, _json: JsonContent, body: AnalysisSchemaIn, db: DB
) -> JSONResponse:
    async with db.begin() as conn:
        stored = await domain.put_schema(conn, auth.account_id, body.root)
    return JSONResponse(stored)
