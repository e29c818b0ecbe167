from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.recover_count_out import RecoverCountOut
from ...models.recover_in import RecoverIn
from ...models.recover_out import RecoverOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    webhook_id: str,
    *,
    body: RecoverIn,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/webhooks/{webhook_id}/recover".format(
            webhook_id=quote(str(webhook_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | RecoverCountOut | RecoverOut | None:
    if response.status_code == 200:
        response_200 = RecoverCountOut.from_dict(response.json())

        return response_200

    if response.status_code == 202:
        response_202 = RecoverOut.from_dict(response.json())

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
) -> Response[ErrorOut | RecoverCountOut | RecoverOut]:
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
    body: RecoverIn,
    idempotency_key: str | Unset = UNSET,
) -> Response[ErrorOut | RecoverCountOut | RecoverOut]:
    """Send again what a webhook missed in a window of time

     Requires scope `webhooks:write`.

    For events created in [`since`, `until`] (`until` defaults to now; `since` within retention; never
    before the webhook was created): every failed or cancelled delivery is scheduled again (same
    `webhook-id`), and every event of a type the webhook subscribes to now that has no delivery to it
    gets one. Nothing that succeeded or is pending is touched, so a second identical call queues nothing
    new. The webhook must be active (409 otherwise). Large windows are processed in batches; the answer
    comes when every delivery is queued. Narrow it with `event_types`, `object_id` and `statuses`
    (`succeeded` replays what was delivered); `backfill` lets the window reach before the webhook
    existed; `dry_run` answers 200 with the count and queues nothing.

    Args:
        webhook_id (str):
        idempotency_key (str | Unset):
        body (RecoverIn):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | RecoverCountOut | RecoverOut]
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
    body: RecoverIn,
    idempotency_key: str | Unset = UNSET,
) -> ErrorOut | RecoverCountOut | RecoverOut | None:
    """Send again what a webhook missed in a window of time

     Requires scope `webhooks:write`.

    For events created in [`since`, `until`] (`until` defaults to now; `since` within retention; never
    before the webhook was created): every failed or cancelled delivery is scheduled again (same
    `webhook-id`), and every event of a type the webhook subscribes to now that has no delivery to it
    gets one. Nothing that succeeded or is pending is touched, so a second identical call queues nothing
    new. The webhook must be active (409 otherwise). Large windows are processed in batches; the answer
    comes when every delivery is queued. Narrow it with `event_types`, `object_id` and `statuses`
    (`succeeded` replays what was delivered); `backfill` lets the window reach before the webhook
    existed; `dry_run` answers 200 with the count and queues nothing.

    Args:
        webhook_id (str):
        idempotency_key (str | Unset):
        body (RecoverIn):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | RecoverCountOut | RecoverOut
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
    body: RecoverIn,
    idempotency_key: str | Unset = UNSET,
) -> Response[ErrorOut | RecoverCountOut | RecoverOut]:
    """Send again what a webhook missed in a window of time

     Requires scope `webhooks:write`.

    For events created in [`since`, `until`] (`until` defaults to now; `since` within retention; never
    before the webhook was created): every failed or cancelled delivery is scheduled again (same
    `webhook-id`), and every event of a type the webhook subscribes to now that has no delivery to it
    gets one. Nothing that succeeded or is pending is touched, so a second identical call queues nothing
    new. The webhook must be active (409 otherwise). Large windows are processed in batches; the answer
    comes when every delivery is queued. Narrow it with `event_types`, `object_id` and `statuses`
    (`succeeded` replays what was delivered); `backfill` lets the window reach before the webhook
    existed; `dry_run` answers 200 with the count and queues nothing.

    Args:
        webhook_id (str):
        idempotency_key (str | Unset):
        body (RecoverIn):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | RecoverCountOut | RecoverOut]
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
    body: RecoverIn,
    idempotency_key: str | Unset = UNSET,
) -> ErrorOut | RecoverCountOut | RecoverOut | None:
    """Send again what a webhook missed in a window of time

     Requires scope `webhooks:write`.

    For events created in [`since`, `until`] (`until` defaults to now; `since` within retention; never
    before the webhook was created): every failed or cancelled delivery is scheduled again (same
    `webhook-id`), and every event of a type the webhook subscribes to now that has no delivery to it
    gets one. Nothing that succeeded or is pending is touched, so a second identical call queues nothing
    new. The webhook must be active (409 otherwise). Large windows are processed in batches; the answer
    comes when every delivery is queued. Narrow it with `event_types`, `object_id` and `statuses`
    (`succeeded` replays what was delivered); `backfill` lets the window reach before the webhook
    existed; `dry_run` answers 200 with the count and queues nothing.

    Args:
        webhook_id (str):
        idempotency_key (str | Unset):
        body (RecoverIn):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | RecoverCountOut | RecoverOut
    """

    return (
        await asyncio_detailed(
            webhook_id=webhook_id,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
