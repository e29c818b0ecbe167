import datetime
from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.stats_out import StatsOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    webhook_id: str,
    *,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

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
        "url": "/v1/webhooks/{webhook_id}/stats".format(
            webhook_id=quote(str(webhook_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | StatsOut | None:
    if response.status_code == 200:
        response_200 = StatsOut.from_dict(response.json())

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
) -> Response[ErrorOut | StatsOut]:
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
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
) -> Response[ErrorOut | StatsOut]:
    """Delivery statistics of a webhook over a window (default: the last 24 hours)

     Requires scope `webhooks:read`.

    `attempts`, `succeeded` and `failed` count attempts started in [`since`, `until`); latency
    percentiles come from a histogram with 5% bins (exact below 32 ms). `pending` counts deliveries
    waiting now.

    Args:
        webhook_id (str):
        since (datetime.datetime | None | Unset):
        until (datetime.datetime | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | StatsOut]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        since=since,
        until=until,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
) -> ErrorOut | StatsOut | None:
    """Delivery statistics of a webhook over a window (default: the last 24 hours)

     Requires scope `webhooks:read`.

    `attempts`, `succeeded` and `failed` count attempts started in [`since`, `until`); latency
    percentiles come from a histogram with 5% bins (exact below 32 ms). `pending` counts deliveries
    waiting now.

    Args:
        webhook_id (str):
        since (datetime.datetime | None | Unset):
        until (datetime.datetime | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | StatsOut
    """

    return sync_detailed(
        webhook_id=webhook_id,
        client=client,
        since=since,
        until=until,
    ).parsed


async def asyncio_detailed(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
) -> Response[ErrorOut | StatsOut]:
    """Delivery statistics of a webhook over a window (default: the last 24 hours)

     Requires scope `webhooks:read`.

    `attempts`, `succeeded` and `failed` count attempts started in [`since`, `until`); latency
    percentiles come from a histogram with 5% bins (exact below 32 ms). `pending` counts deliveries
    waiting now.

    Args:
        webhook_id (str):
        since (datetime.datetime | None | Unset):
        until (datetime.datetime | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | StatsOut]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        since=since,
        until=until,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
) -> ErrorOut | StatsOut | None:
    """Delivery statistics of a webhook over a window (default: the last 24 hours)

     Requires scope `webhooks:read`.

    `attempts`, `succeeded` and `failed` count attempts started in [`since`, `until`); latency
    percentiles come from a histogram with 5% bins (exact below 32 ms). `pending` counts deliveries
    waiting now.

    Args:
        webhook_id (str):
        since (datetime.datetime | None | Unset):
        until (datetime.datetime | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | StatsOut
    """

    return (
        await asyncio_detailed(
            webhook_id=webhook_id,
            client=client,
            since=since,
            until=until,
        )
    ).parsed
