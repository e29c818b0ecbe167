from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.send_test_event_test_event_request import SendTestEventTestEventRequest
from ...models.test_event_out import TestEventOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    webhook_id: str,
    *,
    body: SendTestEventTestEventRequest | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/webhooks/{webhook_id}/test".format(
            webhook_id=quote(str(webhook_id), safe=""),
        ),
    }

    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | TestEventOut | None:
    if response.status_code == 202:
        response_202 = TestEventOut.from_dict(response.json())

        return response_202

    if response.status_code == 400:
        response_400 = ErrorOut.from_dict(response.json())

        return response_400

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
) -> Response[ErrorOut | TestEventOut]:
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
    body: SendTestEventTestEventRequest | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> Response[ErrorOut | TestEventOut]:
    """Send a webhook.test event, or an example of any type, to this webhook alone

     Requires scope `webhooks:write`.

    Without a body, a `webhook.test` event. With `{"event_type": T}`, an example event of type T
    (example data from `GET /v1/event-types`, a real signature), whatever the webhook subscribes to and
    whatever its filter says. A test send counts against the webhook's `rate_limit` when asked for: with
    the window used up, 429 `rate_limited` with `Retry-After` (seconds until it has room).

    Args:
        webhook_id (str):
        idempotency_key (str | Unset):
        body (SendTestEventTestEventRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | TestEventOut]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    body: SendTestEventTestEventRequest | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> ErrorOut | TestEventOut | None:
    """Send a webhook.test event, or an example of any type, to this webhook alone

     Requires scope `webhooks:write`.

    Without a body, a `webhook.test` event. With `{"event_type": T}`, an example event of type T
    (example data from `GET /v1/event-types`, a real signature), whatever the webhook subscribes to and
    whatever its filter says. A test send counts against the webhook's `rate_limit` when asked for: with
    the window used up, 429 `rate_limited` with `Retry-After` (seconds until it has room).

    Args:
        webhook_id (str):
        idempotency_key (str | Unset):
        body (SendTestEventTestEventRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | TestEventOut
    """

    return sync_detailed(
        webhook_id=webhook_id,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    body: SendTestEventTestEventRequest | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> Response[ErrorOut | TestEventOut]:
    """Send a webhook.test event, or an example of any type, to this webhook alone

     Requires scope `webhooks:write`.

    Without a body, a `webhook.test` event. With `{"event_type": T}`, an example event of type T
    (example data from `GET /v1/event-types`, a real signature), whatever the webhook subscribes to and
    whatever its filter says. A test send counts against the webhook's `rate_limit` when asked for: with
    the window used up, 429 `rate_limited` with `Retry-After` (seconds until it has room).

    Args:
        webhook_id (str):
        idempotency_key (str | Unset):
        body (SendTestEventTestEventRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | TestEventOut]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    body: SendTestEventTestEventRequest | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> ErrorOut | TestEventOut | None:
    """Send a webhook.test event, or an example of any type, to this webhook alone

     Requires scope `webhooks:write`.

    Without a body, a `webhook.test` event. With `{"event_type": T}`, an example event of type T
    (example data from `GET /v1/event-types`, a real signature), whatever the webhook subscribes to and
    whatever its filter says. A test send counts against the webhook's `rate_limit` when asked for: with
    the window used up, 429 `rate_limited` with `Retry-After` (seconds until it has room).

    Args:
        webhook_id (str):
        idempotency_key (str | Unset):
        body (SendTestEventTestEventRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | TestEventOut
    """

    return (
        await asyncio_detailed(
            webhook_id=webhook_id,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
