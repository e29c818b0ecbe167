from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.contacts_bulk import ContactsBulk
from ...models.contacts_bulk_out import ContactsBulkOut
from ...models.error_out import ErrorOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: ContactsBulk,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/contacts/bulk",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ContactsBulkOut | ErrorOut | None:
    if response.status_code == 200:
        response_200 = ContactsBulkOut.from_dict(response.json())

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
) -> Response[ContactsBulkOut | ErrorOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: ContactsBulk,
    idempotency_key: str | Unset = UNSET,
) -> Response[ContactsBulkOut | ErrorOut]:
    """Create or update up to 1,000 contacts, matched by phone number or email

     Requires scope `contacts:write`.

    Each row gets a result in `results`, in order: `created`, `updated`, `unchanged` (nothing to change:
    no event) or `refused` (with `error` naming the field, as a 422 would). A row whose `match_on` field
    is missing, or matches several contacts, is refused. Rows are written in transactions of at most 25:
    each batch is atomic, the request is not, and sending the same rows again is safe (they come back
    `unchanged`). The body may be up to 2 MiB.

    Args:
        idempotency_key (str | Unset):
        body (ContactsBulk): ``POST /v1/contacts/bulk``: each row is checked on its own
            (``bulk_row``), so a bad row
            is refused in the results and the others still apply.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ContactsBulkOut | ErrorOut]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: ContactsBulk,
    idempotency_key: str | Unset = UNSET,
) -> ContactsBulkOut | ErrorOut | None:
    """Create or update up to 1,000 contacts, matched by phone number or email

     Requires scope `contacts:write`.

    Each row gets a result in `results`, in order: `created`, `updated`, `unchanged` (nothing to change:
    no event) or `refused` (with `error` naming the field, as a 422 would). A row whose `match_on` field
    is missing, or matches several contacts, is refused. Rows are written in transactions of at most 25:
    each batch is atomic, the request is not, and sending the same rows again is safe (they come back
    `unchanged`). The body may be up to 2 MiB.

    Args:
        idempotency_key (str | Unset):
        body (ContactsBulk): ``POST /v1/contacts/bulk``: each row is checked on its own
            (``bulk_row``), so a bad row
            is refused in the results and the others still apply.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ContactsBulkOut | ErrorOut
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: ContactsBulk,
    idempotency_key: str | Unset = UNSET,
) -> Response[ContactsBulkOut | ErrorOut]:
    """Create or update up to 1,000 contacts, matched by phone number or email

     Requires scope `contacts:write`.

    Each row gets a result in `results`, in order: `created`, `updated`, `unchanged` (nothing to change:
    no event) or `refused` (with `error` naming the field, as a 422 would). A row whose `match_on` field
    is missing, or matches several contacts, is refused. Rows are written in transactions of at most 25:
    each batch is atomic, the request is not, and sending the same rows again is safe (they come back
    `unchanged`). The body may be up to 2 MiB.

    Args:
        idempotency_key (str | Unset):
        body (ContactsBulk): ``POST /v1/contacts/bulk``: each row is checked on its own
            (``bulk_row``), so a bad row
            is refused in the results and the others still apply.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ContactsBulkOut | ErrorOut]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: ContactsBulk,
    idempotency_key: str | Unset = UNSET,
) -> ContactsBulkOut | ErrorOut | None:
    """Create or update up to 1,000 contacts, matched by phone number or email

     Requires scope `contacts:write`.

    Each row gets a result in `results`, in order: `created`, `updated`, `unchanged` (nothing to change:
    no event) or `refused` (with `error` naming the field, as a 422 would). A row whose `match_on` field
    is missing, or matches several contacts, is refused. Rows are written in transactions of at most 25:
    each batch is atomic, the request is not, and sending the same rows again is safe (they come back
    `unchanged`). The body may be up to 2 MiB.

    Args:
        idempotency_key (str | Unset):
        body (ContactsBulk): ``POST /v1/contacts/bulk``: each row is checked on its own
            (``bulk_row``), so a bad row
            is refused in the results and the others still apply.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ContactsBulkOut | ErrorOut
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
