from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.call_out import CallOut
from ...models.error_out import ErrorOut
from ...models.list_calls_call_status_type_0 import ListCallsCallStatusType0
from ...models.list_calls_call_type_type_0 import ListCallsCallTypeType0
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    offset: int | None | Unset = UNSET,
    contact_id: None | str | Unset = UNSET,
    call_status: ListCallsCallStatusType0 | None | Unset = UNSET,
    call_type: ListCallsCallTypeType0 | None | Unset = UNSET,
    assistant_id: None | str | Unset = UNSET,
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

    json_contact_id: None | str | Unset
    if isinstance(contact_id, Unset):
        json_contact_id = UNSET
    else:
        json_contact_id = contact_id
    params["contact_id"] = json_contact_id

    json_call_status: None | str | Unset
    if isinstance(call_status, Unset):
        json_call_status = UNSET
    elif isinstance(call_status, ListCallsCallStatusType0):
        json_call_status = call_status.value
    else:
        json_call_status = call_status
    params["call_status"] = json_call_status

    json_call_type: None | str | Unset
    if isinstance(call_type, Unset):
        json_call_type = UNSET
    elif isinstance(call_type, ListCallsCallTypeType0):
        json_call_type = call_type.value
    else:
        json_call_type = call_type
    params["call_type"] = json_call_type

    json_assistant_id: None | str | Unset
    if isinstance(assistant_id, Unset):
        json_assistant_id = UNSET
    else:
        json_assistant_id = assistant_id
    params["assistant_id"] = json_assistant_id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/calls",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | list[CallOut] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in _response_200:
            response_200_item = CallOut.from_dict(response_200_item_data)

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
) -> Response[ErrorOut | list[CallOut]]:
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
    contact_id: None | str | Unset = UNSET,
    call_status: ListCallsCallStatusType0 | None | Unset = UNSET,
    call_type: ListCallsCallTypeType0 | None | Unset = UNSET,
    assistant_id: None | str | Unset = UNSET,
) -> Response[ErrorOut | list[CallOut]]:
    """List calls, newest first

     Requires scope `calls:read`.

    Args:
        limit (int | Unset): Page size, 1..100. Default: 50.
        cursor (None | str | Unset): Opaque cursor from the previous page's Link header.
        offset (int | None | Unset): Items to skip (for clients written against offsets); ignored
            with `cursor`. The `Link` header's cursor is cheaper and stable while items are added.
        contact_id (None | str | Unset):
        call_status (ListCallsCallStatusType0 | None | Unset):
        call_type (ListCallsCallTypeType0 | None | Unset):
        assistant_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | list[CallOut]]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
        offset=offset,
        contact_id=contact_id,
        call_status=call_status,
        call_type=call_type,
        assistant_id=assistant_id,
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
    contact_id: None | str | Unset = UNSET,
    call_status: ListCallsCallStatusType0 | None | Unset = UNSET,
    call_type: ListCallsCallTypeType0 | None | Unset = UNSET,
    assistant_id: None | str | Unset = UNSET,
) -> ErrorOut | list[CallOut] | None:
    """List calls, newest first

     Requires scope `calls:read`.

    Args:
        limit (int | Unset): Page size, 1..100. Default: 50.
        cursor (None | str | Unset): Opaque cursor from the previous page's Link header.
        offset (int | None | Unset): Items to skip (for clients written against offsets); ignored
            with `cursor`. The `Link` header's cursor is cheaper and stable while items are added.
        contact_id (None | str | Unset):
        call_status (ListCallsCallStatusType0 | None | Unset):
        call_type (ListCallsCallTypeType0 | None | Unset):
        assistant_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | list[CallOut]
    """

    return sync_detailed(
        client=client,
        limit=limit,
        cursor=cursor,
        offset=offset,
        contact_id=contact_id,
        call_status=call_status,
        call_type=call_type,
        assistant_id=assistant_id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    offset: int | None | Unset = UNSET,
    contact_id: None | str | Unset = UNSET,
    call_status: ListCallsCallStatusType0 | None | Unset = UNSET,
    call_type: ListCallsCallTypeType0 | None | Unset = UNSET,
    assistant_id: None | str | Unset = UNSET,
) -> Response[ErrorOut | list[CallOut]]:
    """List calls, newest first

     Requires scope `calls:read`.

    Args:
        limit (int | Unset): Page size, 1..100. Default: 50.
        cursor (None | str | Unset): Opaque cursor from the previous page's Link header.
        offset (int | None | Unset): Items to skip (for clients written against offsets); ignored
            with `cursor`. The `Link` header's cursor is cheaper and stable while items are added.
        contact_id (None | str | Unset):
        call_status (ListCallsCallStatusType0 | None | Unset):
        call_type (ListCallsCallTypeType0 | None | Unset):
        assistant_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | list[CallOut]]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
        offset=offset,
        contact_id=contact_id,
        call_status=call_status,
        call_type=call_type,
        assistant_id=assistant_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    offset: int | None | Unset = UNSET,
    contact_id: None | str | Unset = UNSET,
    call_status: ListCallsCallStatusType0 | None | Unset = UNSET,
    call_type: ListCallsCallTypeType0 | None | Unset = UNSET,
    assistant_id: None | str | Unset = UNSET,
) -> ErrorOut | list[CallOut] | None:
    """List calls, newest first

     Requires scope `calls:read`.

    Args:
        limit (int | Unset): Page size, 1..100. Default: 50.
        cursor (None | str | Unset): Opaque cursor from the previous page's Link header.
        offset (int | None | Unset): Items to skip (for clients written against offsets); ignored
            with `cursor`. The `Link` header's cursor is cheaper and stable while items are added.
        contact_id (None | str | Unset):
        call_status (ListCallsCallStatusType0 | None | Unset):
        call_type (ListCallsCallTypeType0 | None | Unset):
        assistant_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | list[CallOut]
    """

    return (
        await asyncio_detailed(
            client=client,
            limit=limit,
            cursor=cursor,
            offset=offset,
            contact_id=contact_id,
            call_status=call_status,
            call_type=call_type,
            assistant_id=assistant_id,
        )
    ).parsed
