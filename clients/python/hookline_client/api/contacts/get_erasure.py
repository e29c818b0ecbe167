from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.erasure_out import ErasureOut
from ...models.error_out import ErrorOut
from ...types import Response


def _get_kwargs(
    erasure_id: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/erasures/{erasure_id}".format(
            erasure_id=quote(str(erasure_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErasureOut | ErrorOut | None:
    if response.status_code == 200:
        response_200 = ErasureOut.from_dict(response.json())

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
) -> Response[ErasureOut | ErrorOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    erasure_id: str,
    *,
    client: AuthenticatedClient,
) -> Response[ErasureOut | ErrorOut]:
    """An erasure's progress, and what each webhook acknowledged

     Requires scope `contacts:read`.

    Args:
        erasure_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErasureOut | ErrorOut]
    """

    kwargs = _get_kwargs(
        erasure_id=erasure_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    erasure_id: str,
    *,
    client: AuthenticatedClient,
) -> ErasureOut | ErrorOut | None:
    """An erasure's progress, and what each webhook acknowledged

     Requires scope `contacts:read`.

    Args:
        erasure_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErasureOut | ErrorOut
    """

    return sync_detailed(
        erasure_id=erasure_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    erasure_id: str,
    *,
    client: AuthenticatedClient,
) -> Response[ErasureOut | ErrorOut]:
    """An erasure's progress, and what each webhook acknowledged

     Requires scope `contacts:read`.

    Args:
        erasure_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErasureOut | ErrorOut]
    """

    kwargs = _get_kwargs(
        erasure_id=erasure_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    erasure_id: str,
    *,
    client: AuthenticatedClient,
) -> ErasureOut | ErrorOut | None:
    """An erasure's progress, and what each webhook acknowledged

     Requires scope `contacts:read`.

    Args:
        erasure_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErasureOut | ErrorOut
    """

    return (
        await asyncio_detailed(
            erasure_id=erasure_id,
            client=client,
        )
    ).parsed
