from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.event_type_doc import EventTypeDoc
from ...types import Response


def _get_kwargs() -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/event-types",
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | list[EventTypeDoc] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in _response_200:
            response_200_item = EventTypeDoc.from_dict(response_200_item_data)

            response_200.append(response_200_item)

        return response_200

    if response.status_code == 401:
        response_401 = ErrorOut.from_dict(response.json())

        return response_401

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
) -> Response[ErrorOut | list[EventTypeDoc]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
) -> Response[ErrorOut | list[EventTypeDoc]]:
    """The event types and the JSON Schema (2020-12) of each one's delivered body

     Requires an API key (any scope).

    Every type a webhook may receive: the subscribable ones, `webhook.test` and `webhook.conformance`.
    Any valid key may read it. `thin_schema` is the body a webhook with `payload: "thin"` receives. The
    same bodies are in this document's `webhooks`; here, the bodies that carry a call describe
    `data.analysis.outcome` by the account's current call analysis schema.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | list[EventTypeDoc]]
    """

    kwargs = _get_kwargs()

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
) -> ErrorOut | list[EventTypeDoc] | None:
    """The event types and the JSON Schema (2020-12) of each one's delivered body

     Requires an API key (any scope).

    Every type a webhook may receive: the subscribable ones, `webhook.test` and `webhook.conformance`.
    Any valid key may read it. `thin_schema` is the body a webhook with `payload: "thin"` receives. The
    same bodies are in this document's `webhooks`; here, the bodies that carry a call describe
    `data.analysis.outcome` by the account's current call analysis schema.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | list[EventTypeDoc]
    """

    return sync_detailed(
        client=client,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
) -> Response[ErrorOut | list[EventTypeDoc]]:
    """The event types and the JSON Schema (2020-12) of each one's delivered body

     Requires an API key (any scope).

    Every type a webhook may receive: the subscribable ones, `webhook.test` and `webhook.conformance`.
    Any valid key may read it. `thin_schema` is the body a webhook with `payload: "thin"` receives. The
    same bodies are in this document's `webhooks`; here, the bodies that carry a call describe
    `data.analysis.outcome` by the account's current call analysis schema.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | list[EventTypeDoc]]
    """

    kwargs = _get_kwargs()

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
) -> ErrorOut | list[EventTypeDoc] | None:
    """The event types and the JSON Schema (2020-12) of each one's delivered body

     Requires an API key (any scope).

    Every type a webhook may receive: the subscribable ones, `webhook.test` and `webhook.conformance`.
    Any valid key may read it. `thin_schema` is the body a webhook with `payload: "thin"` receives. The
    same bodies are in this document's `webhooks`; here, the bodies that carry a call describe
    `data.analysis.outcome` by the account's current call analysis schema.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | list[EventTypeDoc]
    """

    return (
        await asyncio_detailed(
            client=client,
        )
    ).parsed
