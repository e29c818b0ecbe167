from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.call_complete import CallComplete
from ...models.call_out import CallOut
from ...models.error_out import ErrorOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    call_id: str,
    *,
    body: CallComplete,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/calls/{call_id}/complete".format(
            call_id=quote(str(call_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> CallOut | ErrorOut | None:
    if response.status_code == 200:
        response_200 = CallOut.from_dict(response.json())

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

    if response.status_code == 404:
        response_404 = ErrorOut.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = ErrorOut.from_dict(response.json())

        return response_409

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
) -> Response[CallOut | ErrorOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    call_id: str,
    *,
    client: AuthenticatedClient,
    body: CallComplete,
    idempotency_key: str | Unset = UNSET,
) -> Response[CallOut | ErrorOut]:
    """Complete a call (fires call.completed)

     Requires scope `calls:write`.

    Sets `call_ended_at` (default now) and `duration_seconds` (whole seconds, rounded down), and stores
    the optional `analysis`. In the same transaction as `call.completed`, `analysis.lead_qualification
    == "qualified"` fires `lead.qualified` and `analysis.appointment_booked == true` fires
    `appointment.booked`. Completing a call that already ended is a 409.

    Args:
        call_id (str):
        idempotency_key (str | Unset):
        body (CallComplete):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CallOut | ErrorOut]
    """

    kwargs = _get_kwargs(
        call_id=call_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    call_id: str,
    *,
    client: AuthenticatedClient,
    body: CallComplete,
    idempotency_key: str | Unset = UNSET,
) -> CallOut | ErrorOut | None:
    """Complete a call (fires call.completed)

     Requires scope `calls:write`.

    Sets `call_ended_at` (default now) and `duration_seconds` (whole seconds, rounded down), and stores
    the optional `analysis`. In the same transaction as `call.completed`, `analysis.lead_qualification
    == "qualified"` fires `lead.qualified` and `analysis.appointment_booked == true` fires
    `appointment.booked`. Completing a call that already ended is a 409.

    Args:
        call_id (str):
        idempotency_key (str | Unset):
        body (CallComplete):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CallOut | ErrorOut
    """

    return sync_detailed(
        call_id=call_id,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    call_id: str,
    *,
    client: AuthenticatedClient,
    body: CallComplete,
    idempotency_key: str | Unset = UNSET,
) -> Response[CallOut | ErrorOut]:
    """Complete a call (fires call.completed)

     Requires scope `calls:write`.

    Sets `call_ended_at` (default now) and `duration_seconds` (whole seconds, rounded down), and stores
    the optional `analysis`. In the same transaction as `call.completed`, `analysis.lead_qualification
    == "qualified"` fires `lead.qualified` and `analysis.appointment_booked == true` fires
    `appointment.booked`. Completing a call that already ended is a 409.

    Args:
        call_id (str):
        idempotency_key (str | Unset):
        body (CallComplete):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CallOut | ErrorOut]
    """

    kwargs = _get_kwargs(
        call_id=call_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    call_id: str,
    *,
    client: AuthenticatedClient,
    body: CallComplete,
    idempotency_key: str | Unset = UNSET,
) -> CallOut | ErrorOut | None:
    """Complete a call (fires call.completed)

     Requires scope `calls:write`.

    Sets `call_ended_at` (default now) and `duration_seconds` (whole seconds, rounded down), and stores
    the optional `analysis`. In the same transaction as `call.completed`, `analysis.lead_qualification
    == "qualified"` fires `lead.qualified` and `analysis.appointment_booked == true` fires
    `appointment.booked`. Completing a call that already ended is a 409.

    Args:
        call_id (str):
        idempotency_key (str | Unset):
        body (CallComplete):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CallOut | ErrorOut
    """

    return (
        await asyncio_detailed(
            call_id=call_id,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
