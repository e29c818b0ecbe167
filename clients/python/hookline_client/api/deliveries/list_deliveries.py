from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.delivery_out import DeliveryOut
from ...models.error_out import ErrorOut
from ...models.list_deliveries_status_type_0 import ListDeliveriesStatusType0
from ...types import UNSET, Response, Unset


def _get_kwargs(
    webhook_id: str,
    *,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    offset: int | None | Unset = UNSET,
    status: ListDeliveriesStatusType0 | None | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["limit"] = limit

    json_cursor: None | str | Unset
    if isinstance(cursor, Unset):
        json_cursor = UNSET
    else:
        json_cursor = cursor
    params["cursor"] = json_cursor

    json_offset: int | None | Unset
    if isinstance(offset, Unset):
        json_offset = UNSET
    else:
        json_offset = offset
    params["offset"] = json_offset

    json_status: None | str | Unset
    if isinstance(status, Unset):
        json_status = UNSET
    elif isinstance(status, ListDeliveriesStatusType0):
        json_status = status.value
    else:
        json_status = status
    params["status"] = json_status

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/webhooks/{webhook_id}/deliveries".format(
            webhook_id=quote(str(webhook_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | list[DeliveryOut] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in _response_200:
            response_200_item = DeliveryOut.from_dict(response_200_item_data)

            response_200.append(response_200_item)

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
) -> Response[ErrorOut | list[DeliveryOut]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    offset: int | None | Unset = UNSET,
    status: ListDeliveriesStatusType0 | None | Unset = UNSET,
) -> Response[ErrorOut | list[DeliveryOut]]:
    """List a webhook's deliveries, newest first

     Requires scope `webhooks:read`.

    Args:
        webhook_id (str):
        limit (int | Unset): Page size, 1..100. Default: 50.
        cursor (None | str | Unset): Opaque cursor from the previous page's Link header.
        offset (int | None | Unset): Items to skip (for clients written against offsets); ignored
            with `cursor`. The `Link` header's cursor is cheaper and stable while items are added.
        status (ListDeliveriesStatusType0 | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | list[DeliveryOut]]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        limit=limit,
        cursor=cursor,
        offset=offset,
        status=status,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    offset: int | None | Unset = UNSET,
    status: ListDeliveriesStatusType0 | None | Unset = UNSET,
) -> ErrorOut | list[DeliveryOut] | None:
    """List a webhook's deliveries, newest first

     Requires scope `webhooks:read`.

    Args:
        webhook_id (str):
        limit (int | Unset): Page size, 1..100. Default: 50.
        cursor (None | str | Unset): Opaque cursor from the previous page's Link header.
        offset (int | None | Unset): Items to skip (for clients written against offsets); ignored
            with `cursor`. The `Link` header's cursor is cheaper and stable while items are added.
        status (ListDeliveriesStatusType0 | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | list[DeliveryOut]
    """

    return sync_detailed(
        webhook_id=webhook_id,
        client=client,
        limit=limit,
        cursor=cursor,
        offset=offset,
        status=status,
    ).parsed


async def asyncio_detailed(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    offset: int | None | Unset = UNSET,
    status: ListDeliveriesStatusType0 | None | Unset = UNSET,
) -> Response[ErrorOut | list[DeliveryOut]]:
    """List a webhook's deliveries, newest first

     Requires scope `webhooks:read`.

    Args:
        webhook_id (str):
        limit (int | Unset): Page size, 1..100. Default: 50.
        cursor (None | str | Unset): Opaque cursor from the previous page's Link header.
        offset (int | None | Unset): Items to skip (for clients written against offsets); ignored
            with `cursor`. The `Link` header's cursor is cheaper and stable while items are added.
        status (ListDeliveriesStatusType0 | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | list[DeliveryOut]]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        limit=limit,
        cursor=cursor,
        offset=offset,
        status=status,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    offset: int | None | Unset = UNSET,
    status: ListDeliveriesStatusType0 | None | Unset = UNSET,
) -> ErrorOut | list[DeliveryOut] | None:
    """List a webhook's deliveries, newest first

     Requires scope `webhooks:read`.

    Args:
        webhook_id (str):
        limit (int | Unset): Page size, 1..100. Default: 50.
        cursor (None | str | Unset): Opaque cursor from the previous page's Link header.
        offset (int | None | Unset): Items to skip (for clients written against offsets); ignored
            with `cursor`. The `Link` header's cursor is cheaper and stable while items are added.
        status (ListDeliveriesStatusType0 | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | list[DeliveryOut]
    """

    return (
        await asyncio_detailed(
            webhook_id=webhook_id,
            client=client,
            limit=limit,
            cursor=cursor,
            offset=offset,
            status=status,
        )
    ).parsed
