from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.contact_out import ContactOut
from ...models.error_out import ErrorOut
from ...models.list_contacts_do_not_call_type_0 import ListContactsDoNotCallType0
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    offset: int | None | Unset = UNSET,
    search: None | str | Unset = UNSET,
    tags: None | str | Unset = UNSET,
    phone_number: None | str | Unset = UNSET,
    email: None | str | Unset = UNSET,
    do_not_call: ListContactsDoNotCallType0 | None | Unset = UNSET,
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

    json_search: None | str | Unset
    if isinstance(search, Unset):
        json_search = UNSET
    else:
        json_search = search
    params["search"] = json_search

    json_tags: None | str | Unset
    if isinstance(tags, Unset):
        json_tags = UNSET
    else:
        json_tags = tags
    params["tags"] = json_tags

    json_phone_number: None | str | Unset
    if isinstance(phone_number, Unset):
        json_phone_number = UNSET
    else:
        json_phone_number = phone_number
    params["phone_number"] = json_phone_number

    json_email: None | str | Unset
    if isinstance(email, Unset):
        json_email = UNSET
    else:
        json_email = email
    params["email"] = json_email

    json_do_not_call: None | str | Unset
    if isinstance(do_not_call, Unset):
        json_do_not_call = UNSET
    elif isinstance(do_not_call, ListContactsDoNotCallType0):
        json_do_not_call = do_not_call.value
    else:
        json_do_not_call = do_not_call
    params["do_not_call"] = json_do_not_call

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/contacts",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | list[ContactOut] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in _response_200:
            response_200_item = ContactOut.from_dict(response_200_item_data)

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
) -> Response[ErrorOut | list[ContactOut]]:
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
    search: None | str | Unset = UNSET,
    tags: None | str | Unset = UNSET,
    phone_number: None | str | Unset = UNSET,
    email: None | str | Unset = UNSET,
    do_not_call: ListContactsDoNotCallType0 | None | Unset = UNSET,
) -> Response[ErrorOut | list[ContactOut]]:
    """List contacts, newest first

     Requires scope `contacts:read`.

    Args:
        limit (int | Unset): Page size, 1..100. Default: 50.
        cursor (None | str | Unset): Opaque cursor from the previous page's Link header.
        offset (int | None | Unset): Items to skip (for clients written against offsets); ignored
            with `cursor`. The `Link` header's cursor is cheaper and stable while items are added.
        search (None | str | Unset):
        tags (None | str | Unset): Comma-separated; all must match.
        phone_number (None | str | Unset):
        email (None | str | Unset):
        do_not_call (ListContactsDoNotCallType0 | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | list[ContactOut]]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
        offset=offset,
        search=search,
        tags=tags,
        phone_number=phone_number,
        email=email,
        do_not_call=do_not_call,
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
    search: None | str | Unset = UNSET,
    tags: None | str | Unset = UNSET,
    phone_number: None | str | Unset = UNSET,
    email: None | str | Unset = UNSET,
    do_not_call: ListContactsDoNotCallType0 | None | Unset = UNSET,
) -> ErrorOut | list[ContactOut] | None:
    """List contacts, newest first

     Requires scope `contacts:read`.

    Args:
        limit (int | Unset): Page size, 1..100. Default: 50.
        cursor (None | str | Unset): Opaque cursor from the previous page's Link header.
        offset (int | None | Unset): Items to skip (for clients written against offsets); ignored
            with `cursor`. The `Link` header's cursor is cheaper and stable while items are added.
        search (None | str | Unset):
        tags (None | str | Unset): Comma-separated; all must match.
        phone_number (None | str | Unset):
        email (None | str | Unset):
        do_not_call (ListContactsDoNotCallType0 | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | list[ContactOut]
    """

    return sync_detailed(
        client=client,
        limit=limit,
        cursor=cursor,
        offset=offset,
        search=search,
        tags=tags,
        phone_number=phone_number,
        email=email,
        do_not_call=do_not_call,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    offset: int | None | Unset = UNSET,
    search: None | str | Unset = UNSET,
    tags: None | str | Unset = UNSET,
    phone_number: None | str | Unset = UNSET,
    email: None | str | Unset = UNSET,
    do_not_call: ListContactsDoNotCallType0 | None | Unset = UNSET,
) -> Response[ErrorOut | list[ContactOut]]:
    """List contacts, newest first

     Requires scope `contacts:read`.

    Args:
        limit (int | Unset): Page size, 1..100. Default: 50.
        cursor (None | str | Unset): Opaque cursor from the previous page's Link header.
        offset (int | None | Unset): Items to skip (for clients written against offsets); ignored
            with `cursor`. The `Link` header's cursor is cheaper and stable while items are added.
        search (None | str | Unset):
        tags (None | str | Unset): Comma-separated; all must match.
        phone_number (None | str | Unset):
        email (None | str | Unset):
        do_not_call (ListContactsDoNotCallType0 | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | list[ContactOut]]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
        offset=offset,
        search=search,
        tags=tags,
        phone_number=phone_number,
        email=email,
        do_not_call=do_not_call,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    offset: int | None | Unset = UNSET,
    search: None | str | Unset = UNSET,
    tags: None | str | Unset = UNSET,
    phone_number: None | str | Unset = UNSET,
    email: None | str | Unset = UNSET,
    do_not_call: ListContactsDoNotCallType0 | None | Unset = UNSET,
) -> ErrorOut | list[ContactOut] | None:
    """List contacts, newest first

     Requires scope `contacts:read`.

    Args:
        limit (int | Unset): Page size, 1..100. Default: 50.
        cursor (None | str | Unset): Opaque cursor from the previous page's Link header.
        offset (int | None | Unset): Items to skip (for clients written against offsets); ignored
            with `cursor`. The `Link` header's cursor is cheaper and stable while items are added.
        search (None | str | Unset):
        tags (None | str | Unset): Comma-separated; all must match.
        phone_number (None | str | Unset):
        email (None | str | Unset):
        do_not_call (ListContactsDoNotCallType0 | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | list[ContactOut]
    """

    return (
        await asyncio_detailed(
            client=client,
            limit=limit,
            cursor=cursor,
            offset=offset,
            search=search,
            tags=tags,
            phone_number=phone_number,
            email=email,
            do_not_call=do_not_call,
        )
    ).parsed
