from http import HTTPStatus
from typing import Any, cast

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    after: None | str | Unset = UNSET,
    types: None | str | Unset = UNSET,
    last_event_id: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["last-event-id"] = last_event_id

    params: dict[str, Any] = {}

    json_after: None | str | Unset
    if isinstance(after, Unset):
        json_after = UNSET
    else:
        json_after = after
    params["after"] = json_after

    json_types: None | str | Unset
    if isinstance(types, Unset):
        json_types = UNSET
    else:
        json_types = types
    params["types"] = json_types

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/events/stream",
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | ErrorOut | None:
    if response.status_code == 200:
        response_200 = cast(Any, None)
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
) -> Response[Any | ErrorOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    after: None | str | Unset = UNSET,
    types: None | str | Unset = UNSET,
    last_event_id: None | str | Unset = UNSET,
) -> Response[Any | ErrorOut]:
    """Stream the account's events as Server-Sent Events

     Requires one of the scopes `contacts:read`, `calls:read`, `webhooks:read`.

    Each message: `id:` the event id, `event:` the type, `data:` the body exactly as a webhook delivery
    carries it. Without `Last-Event-ID` or `after`, from now on; with either, every event committed
    after that one, in commit order, nothing skipped. A comment line at least every 15 s. Shows the
    events the key may read (as `GET /v1/events`); `types` naming one it may not is a 403. A key holds
    at most `HOOKLINE_STREAMS_PER_KEY` streams at once (429 past it); revoking the key ends them.

    Args:
        after (None | str | Unset): Resume after this event.
        types (None | str | Unset): a,b: only these types.
        last_event_id (None | str | Unset): Resume after this event; empty: none.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ErrorOut]
    """

    kwargs = _get_kwargs(
        after=after,
        types=types,
        last_event_id=last_event_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    after: None | str | Unset = UNSET,
    types: None | str | Unset = UNSET,
    last_event_id: None | str | Unset = UNSET,
) -> Any | ErrorOut | None:
    """Stream the account's events as Server-Sent Events

     Requires one of the scopes `contacts:read`, `calls:read`, `webhooks:read`.

    Each message: `id:` the event id, `event:` the type, `data:` the body exactly as a webhook delivery
    carries it. Without `Last-Event-ID` or `after`, from now on; with either, every event committed
    after that one, in commit order, nothing skipped. A comment line at least every 15 s. Shows the
    events the key may read (as `GET /v1/events`); `types` naming one it may not is a 403. A key holds
    at most `HOOKLINE_STREAMS_PER_KEY` streams at once (429 past it); revoking the key ends them.

    Args:
        after (None | str | Unset): Resume after this event.
        types (None | str | Unset): a,b: only these types.
        last_event_id (None | str | Unset): Resume after this event; empty: none.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ErrorOut
    """

    return sync_detailed(
        client=client,
        after=after,
        types=types,
        last_event_id=last_event_id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    after: None | str | Unset = UNSET,
    types: None | str | Unset = UNSET,
    last_event_id: None | str | Unset = UNSET,
) -> Response[Any | ErrorOut]:
    """Stream the account's events as Server-Sent Events

     Requires one of the scopes `contacts:read`, `calls:read`, `webhooks:read`.

    Each message: `id:` the event id, `event:` the type, `data:` the body exactly as a webhook delivery
    carries it. Without `Last-Event-ID` or `after`, from now on; with either, every event committed
    after that one, in commit order, nothing skipped. A comment line at least every 15 s. Shows the
    events the key may read (as `GET /v1/events`); `types` naming one it may not is a 403. A key holds
    at most `HOOKLINE_STREAMS_PER_KEY` streams at once (429 past it); revoking the key ends them.

    Args:
        after (None | str | Unset): Resume after this event.
        types (None | str | Unset): a,b: only these types.
        last_event_id (None | str | Unset): Resume after this event; empty: none.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ErrorOut]
    """

    kwargs = _get_kwargs(
        after=after,
        types=types,
        last_event_id=last_event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    after: None | str | Unset = UNSET,
    types: None | str | Unset = UNSET,
    last_event_id: None | str | Unset = UNSET,
) -> Any | ErrorOut | None:
    """Stream the account's events as Server-Sent Events

     Requires one of the scopes `contacts:read`, `calls:read`, `webhooks:read`.

    Each message: `id:` the event id, `event:` the type, `data:` the body exactly as a webhook delivery
    carries it. Without `Last-Event-ID` or `after`, from now on; with either, every event committed
    after that one, in commit order, nothing skipped. A comment line at least every 15 s. Shows the
    events the key may read (as `GET /v1/events`); `types` naming one it may not is a 403. A key holds
    at most `HOOKLINE_STREAMS_PER_KEY` streams at once (429 past it); revoking the key ends them.

    Args:
        after (None | str | Unset): Resume after this event.
        types (None | str | Unset): a,b: only these types.
        last_event_id (None | str | Unset): Resume after this event; empty: none.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ErrorOut
    """

    return (
        await asyncio_detailed(
            client=client,
            after=after,
            types=types,
            last_event_id=last_event_id,
        )
    ).parsed
