from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.event_out import EventOut
from ...types import Response


def _get_kwargs(
    event_id: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/events/{event_id}".format(
            event_id=quote(str(event_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | EventOut | None:
    if response.status_code == 200:
        response_200 = EventOut.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = ErrorOut.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorOut.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = ErrorOut.from_dict(response.json())

        return response_404

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
) -> Response[ErrorOut | EventOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    event_id: str,
    *,
    client: AuthenticatedClient,
) -> Response[ErrorOut | EventOut]:
    """Get an event

     Requires one of the scopes `contacts:read`, `calls:read`, `webhooks:read`.

    Shows only the events the key may read: `contact.*` with `contacts:read`; `call.*`, `lead.qualified`
    and `appointment.booked` with `calls:read`; `webhook.*` and `delivery.*` with `webhooks:read`.
    Requires at least one of the three.

    Args:
        event_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | EventOut]
    """

    kwargs = _get_kwargs(
        event_id=event_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    event_id: str,
    *,
    client: AuthenticatedClient,
) -> ErrorOut | EventOut | None:
    """Get an event

     Requires one of the scopes `contacts:read`, `calls:read`, `webhooks:read`.

    Shows only the events the key may read: `contact.*` with `contacts:read`; `call.*`, `lead.qualified`
    and `appointment.booked` with `calls:read`; `webhook.*` and `delivery.*` with `webhooks:read`.
    Requires at least one of the three.

    Args:
        event_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | EventOut
    """

    return sync_detailed(
        event_id=event_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    event_id: str,
    *,
    client: AuthenticatedClient,
) -> Response[ErrorOut | EventOut]:
    """Get an event

     Requires one of the scopes `contacts:read`, `calls:read`, `webhooks:read`.

    Shows only the events the key may read: `contact.*` with `contacts:read`; `call.*`, `lead.qualified`
    and `appointment.booked` with `calls:read`; `webhook.*` and `delivery.*` with `webhooks:read`.
    Requires at least one of the three.

    Args:
        event_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | EventOut]
    """

    kwargs = _get_kwargs(
        event_id=event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    event_id: str,
    *,
    client: AuthenticatedClient,
) -> ErrorOut | EventOut | None:
    """Get an event

     Requires one of the scopes `contacts:read`, `calls:read`, `webhooks:read`.

    Shows only the events the key may read: `contact.*` with `contacts:read`; `call.*`, `lead.qualified`
    and `appointment.booked` with `calls:read`; `webhook.*` and `delivery.*` with `webhooks:read`.
    Requires at least one of the three.

    Args:
        event_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | EventOut
    """

    return (
        await asyncio_detailed(
            event_id=event_id,
            client=client,
        )
    ).parsed
