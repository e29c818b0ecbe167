import datetime
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.event_out import EventOut
from ...models.list_events_type import ListEventsType
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    offset: int | None | Unset = UNSET,
    type_: ListEventsType | Unset = UNSET,
    object_id: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
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

    json_type_: str | Unset = UNSET
    if not isinstance(type_, Unset):
        json_type_ = type_.value

    params["type"] = json_type_

    json_object_id: None | str | Unset
    if isinstance(object_id, Unset):
        json_object_id = UNSET
    else:
        json_object_id = object_id
    params["object_id"] = json_object_id

    json_since: None | str | Unset
    if isinstance(since, Unset):
        json_since = UNSET
    elif isinstance(since, datetime.datetime):
        json_since = since.isoformat()
    else:
        json_since = since
    params["since"] = json_since

    json_until: None | str | Unset
    if isinstance(until, Unset):
        json_until = UNSET
    elif isinstance(until, datetime.datetime):
        json_until = until.isoformat()
    else:
        json_until = until
    params["until"] = json_until

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/events",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | list[EventOut] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in _response_200:
            response_200_item = EventOut.from_dict(response_200_item_data)

            response_200.append(response_200_item)

        return response_200

    if response.status_code == 401:
        response_401 = ErrorOut.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorOut.from_dict(response.json())

        return response_403

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
) -> Response[ErrorOut | list[EventOut]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    offset: int | None | Unset = UNSET,
    type_: ListEventsType | Unset = UNSET,
    object_id: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
) -> Response[ErrorOut | list[EventOut]]:
    """List the account's events of the last 30 days, newest first

     Requires one of the scopes `contacts:read`, `calls:read`, `webhooks:read`.

    Shows only the events the key may read: `contact.*` with `contacts:read`; `call.*`, `lead.qualified`
    and `appointment.booked` with `calls:read`; `webhook.*` and `delivery.*` with `webhooks:read`.
    Requires at least one of the three.

    Args:
        limit (int | Unset): Page size, 1..100. Default: 50.
        cursor (None | str | Unset): Opaque cursor from the previous page's Link header.
        offset (int | None | Unset): Items to skip (for clients written against offsets); ignored
            with `cursor`. The `Link` header's cursor is cheaper and stable while items are added.
        type_ (ListEventsType | Unset): Only events of this type.
        object_id (None | str | Unset): Only events about this contact or call (a call's events
            also count for its contact).
        since (datetime.datetime | None | Unset): Only events created at or after.
        until (datetime.datetime | None | Unset): Only events created at or before.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | list[EventOut]]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
        offset=offset,
        type_=type_,
        object_id=object_id,
        since=since,
        until=until,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    offset: int | None | Unset = UNSET,
    type_: ListEventsType | Unset = UNSET,
    object_id: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
) -> ErrorOut | list[EventOut] | None:
    """List the account's events of the last 30 days, newest first

     Requires one of the scopes `contacts:read`, `calls:read`, `webhooks:read`.

    Shows only the events the key may read: `contact.*` with `contacts:read`; `call.*`, `lead.qualified`
    and `appointment.booked` with `calls:read`; `webhook.*` and `delivery.*` with `webhooks:read`.
    Requires at least one of the three.

    Args:
        limit (int | Unset): Page size, 1..100. Default: 50.
        cursor (None | str | Unset): Opaque cursor from the previous page's Link header.
        offset (int | None | Unset): Items to skip (for clients written against offsets); ignored
            with `cursor`. The `Link` header's cursor is cheaper and stable while items are added.
        type_ (ListEventsType | Unset): Only events of this type.
        object_id (None | str | Unset): Only events about this contact or call (a call's events
            also count for its contact).
        since (datetime.datetime | None | Unset): Only events created at or after.
        until (datetime.datetime | None | Unset): Only events created at or before.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | list[EventOut]
    """

    return sync_detailed(
        client=client,
        limit=limit,
        cursor=cursor,
        offset=offset,
        type_=type_,
        object_id=object_id,
        since=since,
        until=until,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    offset: int | None | Unset = UNSET,
    type_: ListEventsType | Unset = UNSET,
    object_id: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
) -> Response[ErrorOut | list[EventOut]]:
    """List the account's events of the last 30 days, newest first

     Requires one of the scopes `contacts:read`, `calls:read`, `webhooks:read`.

    Shows only the events the key may read: `contact.*` with `contacts:read`; `call.*`, `lead.qualified`
    and `appointment.booked` with `calls:read`; `webhook.*` and `delivery.*` with `webhooks:read`.
    Requires at least one of the three.

    Args:
        limit (int | Unset): Page size, 1..100. Default: 50.
        cursor (None | str | Unset): Opaque cursor from the previous page's Link header.
        offset (int | None | Unset): Items to skip (for clients written against offsets); ignored
            with `cursor`. The `Link` header's cursor is cheaper and stable while items are added.
        type_ (ListEventsType | Unset): Only events of this type.
        object_id (None | str | Unset): Only events about this contact or call (a call's events
            also count for its contact).
        since (datetime.datetime | None | Unset): Only events created at or after.
        until (datetime.datetime | None | Unset): Only events created at or before.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | list[EventOut]]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
        offset=offset,
        type_=type_,
        object_id=object_id,
        since=since,
        until=until,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    offset: int | None | Unset = UNSET,
    type_: ListEventsType | Unset = UNSET,
    object_id: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
) -> ErrorOut | list[EventOut] | None:
    """List the account's events of the last 30 days, newest first

     Requires one of the scopes `contacts:read`, `calls:read`, `webhooks:read`.

    Shows only the events the key may read: `contact.*` with `contacts:read`; `call.*`, `lead.qualified`
    and `appointment.booked` with `calls:read`; `webhook.*` and `delivery.*` with `webhooks:read`.
    Requires at least one of the three.

    Args:
        limit (int | Unset): Page size, 1..100. Default: 50.
        cursor (None | str | Unset): Opaque cursor from the previous page's Link header.
        offset (int | None | Unset): Items to skip (for clients written against offsets); ignored
            with `cursor`. The `Link` header's cursor is cheaper and stable while items are added.
        type_ (ListEventsType | Unset): Only events of this type.
        object_id (None | str | Unset): Only events about this contact or call (a call's events
            also count for its contact).
        since (datetime.datetime | None | Unset): Only events created at or after.
        until (datetime.datetime | None | Unset): Only events created at or before.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | list[EventOut]
    """

    return (
        await asyncio_detailed(
            client=client,
            limit=limit,
            cursor=cursor,
            offset=offset,
            type_=type_,
            object_id=object_id,
            since=since,
            until=until,
        )
    ).parsed
