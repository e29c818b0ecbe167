from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.conformance_out import ConformanceOut
from ...models.error_out import ErrorOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    webhook_id: str,
    *,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/webhooks/{webhook_id}/conformance".format(
            webhook_id=quote(str(webhook_id), safe=""),
        ),
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ConformanceOut | ErrorOut | None:
    if response.status_code == 200:
        response_200 = ConformanceOut.from_dict(response.json())

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
) -> Response[ConformanceOut | ErrorOut]:
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
    idempotency_key: str | Unset = UNSET,
) -> Response[ConformanceOut | ErrorOut]:
    """Check the receiver: does it verify signatures, timestamps and bodies?

     Requires scope `webhooks:write`.

    Sends, within 30 s, `webhook.conformance` probes to the webhook's URL (the SSRF rules apply):
    `valid` (expects 2xx), `bad_signature`, `stale_timestamp` (10 min old) and `tampered_body` (each
    expects a non-2xx) and `duplicate_id` (the valid one again; expects 2xx); a webhook with `auth` also
    gets `auth_enforced` (the valid one without its OAuth2 token; expects a non-2xx). Probes are not
    deliveries and never count toward auto-disable. A webhook takes one check per 10 s, and its probes
    count against its `rate_limit` (paced to fit it); a check asked for sooner, or while the window has
    no room, is 429 `rate_limited` with `Retry-After` (seconds until it would be taken).

    Args:
        webhook_id (str):
        idempotency_key (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ConformanceOut | ErrorOut]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
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
    idempotency_key: str | Unset = UNSET,
) -> ConformanceOut | ErrorOut | None:
    """Check the receiver: does it verify signatures, timestamps and bodies?

     Requires scope `webhooks:write`.

    Sends, within 30 s, `webhook.conformance` probes to the webhook's URL (the SSRF rules apply):
    `valid` (expects 2xx), `bad_signature`, `stale_timestamp` (10 min old) and `tampered_body` (each
    expects a non-2xx) and `duplicate_id` (the valid one again; expects 2xx); a webhook with `auth` also
    gets `auth_enforced` (the valid one without its OAuth2 token; expects a non-2xx). Probes are not
    deliveries and never count toward auto-disable. A webhook takes one check per 10 s, and its probes
    count against its `rate_limit` (paced to fit it); a check asked for sooner, or while the window has
    no room, is 429 `rate_limited` with `Retry-After` (seconds until it would be taken).

    Args:
        webhook_id (str):
        idempotency_key (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ConformanceOut | ErrorOut
    """

    return sync_detailed(
        webhook_id=webhook_id,
        client=client,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    idempotency_key: str | Unset = UNSET,
) -> Response[ConformanceOut | ErrorOut]:
    """Check the receiver: does it verify signatures, timestamps and bodies?

     Requires scope `webhooks:write`.

    Sends, within 30 s, `webhook.conformance` probes to the webhook's URL (the SSRF rules apply):
    `valid` (expects 2xx), `bad_signature`, `stale_timestamp` (10 min old) and `tampered_body` (each
    expects a non-2xx) and `duplicate_id` (the valid one again; expects 2xx); a webhook with `auth` also
    gets `auth_enforced` (the valid one without its OAuth2 token; expects a non-2xx). Probes are not
    deliveries and never count toward auto-disable. A webhook takes one check per 10 s, and its probes
    count against its `rate_limit` (paced to fit it); a check asked for sooner, or while the window has
    no room, is 429 `rate_limited` with `Retry-After` (seconds until it would be taken).

    Args:
        webhook_id (str):
        idempotency_key (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ConformanceOut | ErrorOut]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    idempotency_key: str | Unset = UNSET,
) -> ConformanceOut | ErrorOut | None:
    """Check the receiver: does it verify signatures, timestamps and bodies?

     Requires scope `webhooks:write`.

    Sends, within 30 s, `webhook.conformance` probes to the webhook's URL (the SSRF rules apply):
    `valid` (expects 2xx), `bad_signature`, `stale_timestamp` (10 min old) and `tampered_body` (each
    expects a non-2xx) and `duplicate_id` (the valid one again; expects 2xx); a webhook with `auth` also
    gets `auth_enforced` (the valid one without its OAuth2 token; expects a non-2xx). Probes are not
    deliveries and never count toward auto-disable. A webhook takes one check per 10 s, and its probes
    count against its `rate_limit` (paced to fit it); a check asked for sooner, or while the window has
    no room, is 429 `rate_limited` with `Retry-After` (seconds until it would be taken).

    Args:
        webhook_id (str):
        idempotency_key (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ConformanceOut | ErrorOut
    """

    return (
        await asyncio_detailed(
            webhook_id=webhook_id,
            client=client,
            idempotency_key=idempotency_key,
        )
    ).parsed
