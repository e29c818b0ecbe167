from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.analysis_schema_in import AnalysisSchemaIn
from ...models.analysis_schema_out import AnalysisSchemaOut
from ...models.error_out import ErrorOut
from ...types import Response


def _get_kwargs(
    *,
    body: AnalysisSchemaIn,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/v1/call-analysis-schema",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> AnalysisSchemaOut | ErrorOut | None:
    if response.status_code == 200:
        response_200 = AnalysisSchemaOut.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = ErrorOut.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ErrorOut.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorOut.from_dict(response.json())

        return response_403

    if response.status_code == 413:
        response_413 = ErrorOut.from_dict(response.json())

        return response_413

    if response.status_code == 415:
        response_415 = ErrorOut.from_dict(response.json())

        return response_415

    if response.status_code == 422:
        response_422 = ErrorOut.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = ErrorOut.from_dict(response.json())

        return response_429

    if response.status_code == 500:
        response_500 = ErrorOut.from_dict(response.json())

        return response_500

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[AnalysisSchemaOut | ErrorOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: AnalysisSchemaIn,
) -> Response[AnalysisSchemaOut | ErrorOut]:
    """Set the account's call analysis schema (a new version)

     Requires scope `calls:write`.

    The body is the JSON Schema itself, in the subset described in docs/webhooks.md (anything else is a
    422 naming the keyword). Outcomes recorded before keep the version they were validated against.

    Args:
        body (AnalysisSchemaIn): A JSON Schema of the outcome: `type` object, string, number,
            integer, boolean or
            array; `properties`, `required`, `additionalProperties` (a boolean), `items`, `enum`,
            `minimum`/`maximum`, `minLength`/`maxLength`, `maxItems`, `description`. Nothing else.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AnalysisSchemaOut | ErrorOut]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: AnalysisSchemaIn,
) -> AnalysisSchemaOut | ErrorOut | None:
    """Set the account's call analysis schema (a new version)

     Requires scope `calls:write`.

    The body is the JSON Schema itself, in the subset described in docs/webhooks.md (anything else is a
    422 naming the keyword). Outcomes recorded before keep the version they were validated against.

    Args:
        body (AnalysisSchemaIn): A JSON Schema of the outcome: `type` object, string, number,
            integer, boolean or
            array; `properties`, `required`, `additionalProperties` (a boolean), `items`, `enum`,
            `minimum`/`maximum`, `minLength`/`maxLength`, `maxItems`, `description`. Nothing else.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AnalysisSchemaOut | ErrorOut
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: AnalysisSchemaIn,
) -> Response[AnalysisSchemaOut | ErrorOut]:
    """Set the account's call analysis schema (a new version)

     Requires scope `calls:write`.

    The body is the JSON Schema itself, in the subset described in docs/webhooks.md (anything else is a
    422 naming the keyword). Outcomes recorded before keep the version they were validated against.

    Args:
        body (AnalysisSchemaIn): A JSON Schema of the outcome: `type` object, string, number,
            integer, boolean or
            array; `properties`, `required`, `additionalProperties` (a boolean), `items`, `enum`,
            `minimum`/`maximum`, `minLength`/`maxLength`, `maxItems`, `description`. Nothing else.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AnalysisSchemaOut | ErrorOut]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: AnalysisSchemaIn,
) -> AnalysisSchemaOut | ErrorOut | None:
    """Set the account's call analysis schema (a new version)

     Requires scope `calls:write`.

    The body is the JSON Schema itself, in the subset described in docs/webhooks.md (anything else is a
    422 naming the keyword). Outcomes recorded before keep the version they were validated against.

    Args:
        body (AnalysisSchemaIn): A JSON Schema of the outcome: `type` object, string, number,
            integer, boolean or
            array; `properties`, `required`, `additionalProperties` (a boolean), `items`, `enum`,
            `minimum`/`maximum`, `minLength`/`maxLength`, `maxItems`, `description`. Nothing else.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AnalysisSchemaOut | ErrorOut
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
