from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.erasure_accepted import ErasureAccepted
from ...models.error_out import ErrorOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    contact_id: str,
    *,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/contacts/{contact_id}/erase".format(
            contact_id=quote(str(contact_id), safe=""),
        ),
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErasureAccepted | ErrorOut | None:
    if response.status_code == 202:
        response_202 = ErasureAccepted.from_dict(response.json())

        return response_202

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
) -> Response[ErasureAccepted | ErrorOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    contact_id: str,
    *,
    client: AuthenticatedClient,
    idempotency_key: str | Unset = UNSET,
) -> Response[ErasureAccepted | ErrorOut]:
    """Erase a contact and its data everywhere (fires contact.erased when done)

     Requires scope `contacts:write`.

    Deletes the contact at once; a background job then removes its data from its calls, every event and
    delivery attempt about it and stored idempotent responses, and sends `contact.erased` to each
    webhook that received any of it. Erasing again answers the same erasure. A contact deleted earlier
    can still be erased.

    Args:
        contact_id (str):
        idempotency_key (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErasureAccepted | ErrorOut]
    """

    kwargs = _get_kwargs(
        contact_id=contact_id,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    contact_id: str,
    *,
    client: AuthenticatedClient,
    idempotency_key: str | Unset = UNSET,
) -> ErasureAccepted | ErrorOut | None:
    """Erase a contact and its data everywhere (fires contact.erased when done)

     Requires scope `contacts:write`.

    Deletes the contact at once; a background job then removes its data from its calls, every event and
    delivery attempt about it and stored idempotent responses, and sends `contact.erased` to each
    webhook that received any of it. Erasing again answers the same erasure. A contact deleted earlier
    can still be erased.

    Args:
        contact_id (str):
        idempotency_key (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErasureAccepted | ErrorOut
    """

    return sync_detailed(
        contact_id=contact_id,
        client=client,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    contact_id: str,
    *,
    client: AuthenticatedClient,
    idempotency_key: str | Unset = UNSET,
) -> Response[ErasureAccepted | ErrorOut]:
    """Erase a contact and its data everywhere (fires contact.erased when done)

     Requires scope `contacts:write`.

    Deletes the contact at once; a background job then removes its data from its calls, every event and
    delivery attempt about it and stored idempotent responses, and sends `contact.erased` to each
    webhook that received any of it. Erasing again answers the same erasure. A contact deleted earlier
    can still be erased.

    Args:
        contact_id (str):
        idempotency_key (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErasureAccepted | ErrorOut]
    """

    kwargs = _get_kwargs(
        contact_id=contact_id,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    contact_id: str,
    *,
    client: AuthenticatedClient,
    idempotency_key: str | Unset = UNSET,
) -> ErasureAccepted | ErrorOut | None:
    """Erase a contact and its data everywhere (fires contact.erased when done)

     Requires scope `contacts:write`.

    Deletes the contact at once; a background job then removes its data from its calls, every event and
    delivery attempt about it and stored idempotent responses, and sends `contact.erased` to each
    webhook that received any of it. Erasing again answers the same erasure. A contact deleted earlier
    can still be erased.

    Args:
        contact_id (str):
        idempotency_key (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErasureAccepted | ErrorOut
    """

    return (
        await asyncio_detailed(
            contact_id=contact_id,
            client=client,
            idempotency_key=idempotency_key,
        )
    ).parsed
