from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.webhook_out import WebhookOut
from ...models.webhook_update import WebhookUpdate
from ...types import Response


def _get_kwargs(
    webhook_id: str,
    *,
    body: WebhookUpdate,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/webhooks/{webhook_id}".format(
            webhook_id=quote(str(webhook_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | WebhookOut | None:
    if response.status_code == 200:
        response_200 = WebhookOut.from_dict(response.json())

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

    if response.status_code == 404:
        response_404 = ErrorOut.from_dict(response.json())

        return response_404

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
) -> Response[ErrorOut | WebhookOut]:
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
    body: WebhookUpdate,
) -> Response[ErrorOut | WebhookOut]:
    """Update a webhook subscription (secret masked)

     Requires scope `webhooks:write`.

    Absent fields are kept; `name`, `filter` and `rate_limit` take null to clear. `headers` merges:
    `{"X-Key": null}` removes that header, names match case-insensitively. Setting `is_active` to true
    also clears `disabled_reason`. A new `signing` starts a new key or secret (the old one signs beside
    it for 24 hours; a switch to hmac returns the new `secret` in full, this once). `auth` replaces the
    current one; with the same type, a secret sent as "********" keeps the stored one. `redact` is
    checked against the subscribed types after the change (new `events` too).

    Args:
        webhook_id (str):
        body (WebhookUpdate): Partial update: absent fields are kept; ``name``, ``filter`` and
            ``rate_limit`` take
            ``null`` to clear; ``headers`` merges.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | WebhookOut]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    body: WebhookUpdate,
) -> ErrorOut | WebhookOut | None:
    """Update a webhook subscription (secret masked)

     Requires scope `webhooks:write`.

    Absent fields are kept; `name`, `filter` and `rate_limit` take null to clear. `headers` merges:
    `{"X-Key": null}` removes that header, names match case-insensitively. Setting `is_active` to true
    also clears `disabled_reason`. A new `signing` starts a new key or secret (the old one signs beside
    it for 24 hours; a switch to hmac returns the new `secret` in full, this once). `auth` replaces the
    current one; with the same type, a secret sent as "********" keeps the stored one. `redact` is
    checked against the subscribed types after the change (new `events` too).

    Args:
        webhook_id (str):
        body (WebhookUpdate): Partial update: absent fields are kept; ``name``, ``filter`` and
            ``rate_limit`` take
            ``null`` to clear; ``headers`` merges.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | WebhookOut
    """

    return sync_detailed(
        webhook_id=webhook_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    body: WebhookUpdate,
) -> Response[ErrorOut | WebhookOut]:
    """Update a webhook subscription (secret masked)

     Requires scope `webhooks:write`.

    Absent fields are kept; `name`, `filter` and `rate_limit` take null to clear. `headers` merges:
    `{"X-Key": null}` removes that header, names match case-insensitively. Setting `is_active` to true
    also clears `disabled_reason`. A new `signing` starts a new key or secret (the old one signs beside
    it for 24 hours; a switch to hmac returns the new `secret` in full, this once). `auth` replaces the
    current one; with the same type, a secret sent as "********" keeps the stored one. `redact` is
    checked against the subscribed types after the change (new `events` too).

    Args:
        webhook_id (str):
        body (WebhookUpdate): Partial update: absent fields are kept; ``name``, ``filter`` and
            ``rate_limit`` take
            ``null`` to clear; ``headers`` merges.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | WebhookOut]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    body: WebhookUpdate,
) -> ErrorOut | WebhookOut | None:
    """Update a webhook subscription (secret masked)

     Requires scope `webhooks:write`.

    Absent fields are kept; `name`, `filter` and `rate_limit` take null to clear. `headers` merges:
    `{"X-Key": null}` removes that header, names match case-insensitively. Setting `is_active` to true
    also clears `disabled_reason`. A new `signing` starts a new key or secret (the old one signs beside
    it for 24 hours; a switch to hmac returns the new `secret` in full, this once). `auth` replaces the
    current one; with the same type, a secret sent as "********" keeps the stored one. `redact` is
    checked against the subscribed types after the change (new `events` too).

    Args:
        webhook_id (str):
        body (WebhookUpdate): Partial update: absent fields are kept; ``name``, ``filter`` and
            ``rate_limit`` take
            ``null`` to clear; ``headers`` merges.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | WebhookOut
    """

    return (
        await asyncio_detailed(
            webhook_id=webhook_id,
            client=client,
            body=body,
        )
    ).parsed
