from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.call_create import CallCreate
from ...models.call_out import CallOut
from ...models.error_out import ErrorOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: CallCreate,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/calls",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> CallOut | ErrorOut | None:
    if response.status_code == 201:
        response_201 = CallOut.from_dict(response.json())

        return response_201

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
) -> Response[CallOut | ErrorOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: CallCreate,
    idempotency_key: str | Unset = UNSET,
) -> Response[CallOut | ErrorOut]:
    """Start a call (fires call.started)

     Requires scope `calls:write`.

    Without `contact_id`, the call is linked to the account's contact with `customer_phone_number`, if
    one exists. A `contact_id` that is not one of the account's contacts is a 422. A call for a contact
    marked `do_not_call` is refused: 409 `do_not_call`.

    Args:
        idempotency_key (str | Unset):
        body (CallCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CallOut | ErrorOut]
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
    body: CallCreate,
    idempotency_key: str | Unset = UNSET,
) -> CallOut | ErrorOut | None:
    """Start a call (fires call.started)

     Requires scope `calls:write`.

    Without `contact_id`, the call is linked to the account's contact with `customer_phone_number`, if
    one exists. A `contact_id` that is not one of the account's contacts is a 422. A call for a contact
    marked `do_not_call` is refused: 409 `do_not_call`.

    Args:
        idempotency_key (str | Unset):
        body (CallCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CallOut | ErrorOut
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: CallCreate,
    idempotency_key: str | Unset = UNSET,
) -> Response[CallOut | ErrorOut]:
    """Start a call (fires call.started)

     Requires scope `calls:write`.

    Without `contact_id`, the call is linked to the account's contact with `customer_phone_number`, if
    one exists. A `contact_id` that is not one of the account's contacts is a 422. A call for a contact
    marked `do_not_call` is refused: 409 `do_not_call`.

    Args:
        idempotency_key (str | Unset):
        body (CallCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CallOut | ErrorOut]
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
    body: CallCreate,
    idempotency_key: str | Unset = UNSET,
) -> CallOut | ErrorOut | None:
    """Start a call (fires call.started)

     Requires scope `calls:write`.

    Without `contact_id`, the call is linked to the account's contact with `customer_phone_number`, if
    one exists. A `contact_id` that is not one of the account's contacts is a 422. A call for a contact
    marked `do_not_call` is refused: 409 `do_not_call`.

    Args:
        idempotency_key (str | Unset):
        body (CallCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CallOut | ErrorOut
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
