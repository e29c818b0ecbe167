"""The receiver check ("webhook doctor"): probes a webhook's URL the way an attacker or a flaky
network would, and grades what the receiver accepts.

Probes are ``webhook.conformance`` requests sent with the delivery engine's own ``Sender`` (the
same SSRF guard, timeouts and no redirects) and the webhook's own secrets and custom headers.
They are not deliveries: nothing is stored, and nothing the receiver answers counts toward
auto-disabling the webhook (not even 410). They do count against the webhook's rate limit, and
a webhook takes one check per ``domain.outbound.CONFORMANCE_INTERVAL``.

1. ``valid``: a correctly signed request; expects 2xx.
2. ``bad_signature``: signed with a secret that is not the webhook's; expects non-2xx.
3. ``stale_timestamp``: correctly signed, but ``webhook-timestamp`` is 10 minutes old (the
   Standard Webhooks libraries refuse more than 5 minutes); expects non-2xx.
4. ``tampered_body``: signed for one body, sent with another; expects non-2xx.
5. ``duplicate_id``: the valid request again (same ``webhook-id``, same body, signed afresh);
   expects 2xx: a receiver that dedupes on ``webhook-id`` acknowledges a redelivery.
6. ``auth_enforced`` (webhooks with ``auth`` only): the valid request without the OAuth2 token
   (no ``Authorization``) or without the client certificate; expects a refusal (a non-2xx,
   or a TLS handshake the receiver ends): the report says whether the receiver enforces auth.

Every probe but the last carries the webhook's ``auth``; ``bad_signature`` is signed with a
stranger's key of the webhook's own scheme (HMAC or Ed25519).
"""

from __future__ import annotations

import asyncio
import base64
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from hookline import ids
from hookline.delivery.endpoint_auth import EndpointAuth, MutualTLS, OAuth2Credentials
from hookline.delivery.manager import RATE_MARGIN_US, RATE_WINDOW_US
from hookline.delivery.sender import AttemptResult, Sender
from hookline.delivery.shaping import BodyShape, shaped
from hookline.delivery.signing import (
    SECRET_PREFIX,
    build_headers,
    event_body,
    is_signing_key,
    new_signing_key,
)
from hookline.timeutil import utcnow

EVENT_TYPE = "webhook.conformance"
BUDGET_SECONDS = 30.0
STALE_SECONDS = 600


@dataclass(frozen=True)
class Target:
    webhook_id: str
    url: str
    secrets: list[str]
    """The live signing secrets, plaintext."""
    headers: Mapping[str, str]
    """The webhook's custom headers."""
    auth: OAuth2Credentials | MutualTLS | None = None
    """The webhook's ``auth``, plaintext."""
    shape: BodyShape | None = None
    """The webhook's ``redact`` and ``payload``: probes are shaped as its deliveries are."""


@dataclass(frozen=True)
class _Probe:
    name: str
    expects_success: bool
    request: Callable[[Target, bytes, str], tuple[dict[str, str], bytes]]
    without_auth: bool = False
    """Sent without the webhook's ``auth``: the receiver should refuse it."""


def _signed(target: Target, body: bytes, event_id: str, *, at: int | None = None) -> dict[str, str]:
    timestamp = int(time.time()) if at is None else at
    return {**target.headers, **build_headers(event_id, timestamp, body, target.secrets)}


def _valid(target: Target, body: bytes, event_id: str) -> tuple[dict[str, str], bytes]:
    return _signed(target, body, event_id), body


def _bad_signature(target: Target, body: bytes, event_id: str) -> tuple[dict[str, str], bytes]:
    if is_signing_key(target.secrets[0]):
        wrong = new_signing_key()
    else:
        wrong = SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()
    stranger = Target(target.webhook_id, target.url, [wrong], target.headers)
    return _signed(stranger, body, event_id), body


def _stale(target: Target, body: bytes, event_id: str) -> tuple[dict[str, str], bytes]:
    return _signed(target, body, event_id, at=int(time.time()) - STALE_SECONDS), body


def _tampered(target: Target, body: bytes, event_id: str) -> tuple[dict[str, str], bytes]:
    payload = orjson.loads(body)
    payload["data"]["message"] = "This body was changed after it was signed."
    return _signed(target, body, event_id), orjson.dumps(payload)


def _unauthenticated(target: Target, body: bytes, event_id: str) -> tuple[dict[str, str], bytes]:
    headers = _signed(target, body, event_id)
    return {k: v for k, v in headers.items() if k.lower() != "authorization"}, body


PROBES = (
    _Probe("valid", True, _valid),
    _Probe("bad_signature", False, _bad_signature),
    _Probe("stale_timestamp", False, _stale),
    _Probe("tampered_body", False, _tampered),
    _Probe("duplicate_id", True, _valid),
)
AUTH_PROBE = _Probe("auth_enforced", False, _unauthenticated, without_auth=True)


def probes_of(target: Target) -> tuple[_Probe, ...]:
    """The probes a webhook gets: ``auth_enforced`` too when it has ``auth``."""
    return (*PROBES, AUTH_PROBE) if target.auth is not None else PROBES


def probe_count(*, has_auth: bool) -> int:
    return len(PROBES) + (1 if has_auth else 0)


def _probe_auth(probe: _Probe, target: Target) -> EndpointAuth | None:
    if not probe.without_auth:
        return target.auth
    # Without the client certificate, but trusting the receiver's server as usual.
    return target.auth.without_client_certificate() if isinstance(target.auth, MutualTLS) else None


def _body(target: Target, event_id: str, probe: str) -> bytes:
    data = {
        "webhook_id": target.webhook_id,
        "probe": probe,
        "message": "A receiver check from hookline (POST /v1/webhooks/{id}/conformance); "
        "not a real event.",
    }
    return shaped(event_body(event_id, EVENT_TYPE, utcnow(), data, None), target.shape)


def _grade_auth(probe: _Probe, result: AttemptResult, valid_passed: bool) -> dict[str, Any]:
    """Whether the receiver refused a request without the auth it is configured with."""
    status = result.status_code
    if not valid_passed:
        detail = "enforces auth: unknown (the valid probe, with auth, was not accepted)"
        return {"name": probe.name, "passed": False, "status_code": status, "detail": detail}
    if status is not None and 200 <= status < 300:
        detail = (
            f"enforces auth: no (accepted with {status} a request without the token or the "
            "client certificate)"
        )
        return {"name": probe.name, "passed": False, "status_code": status, "detail": detail}
    refused = f"refused with {status}" if status is not None else f"refused: {result.error}"
    return {
        "name": probe.name,
        "passed": True,
        "status_code": status,
        "detail": f"enforces auth: yes ({refused})",
    }


def _grade(probe: _Probe, result: AttemptResult) -> dict[str, Any]:
    status = result.status_code
    if status is None:
        reached = f"not answered: {result.error}" if result.error else "not answered"
        return {"name": probe.name, "passed": False, "status_code": None, "detail": reached}
    succeeded = 200 <= status < 300
    if probe.expects_success:
        passed = succeeded
        detail = "accepted" if passed else f"expected a 2xx, got {status}"
    else:
        passed = not succeeded
        detail = (
            f"refused with {status}"
            if passed
            else f"accepted with {status}: the receiver must verify the signature and timestamp "
            "(e.g. standardwebhooks' Webhook(secret).verify) and answer 4xx when they fail"
        )
    return {"name": probe.name, "passed": passed, "status_code": status, "detail": detail}


def _not_sent(probe: _Probe) -> dict[str, Any]:
    detail = f"not sent: the check's {BUDGET_SECONDS:g} s budget ran out"
    return {"name": probe.name, "passed": False, "status_code": None, "detail": detail}


@dataclass(frozen=True)
class Pace:
    """The probes of a webhook with a rate limit (``domain.outbound``): when each may start by
    the window's rule, and the limit, so that no more than ``limit`` probes reach the receiver
    in any window, however long each took to arrive."""

    starts: Sequence[datetime]
    limit: int


# A probe ``limit`` places after another waits this long after that one was answered (the
# receiver had it by then): the rate window and its margin.
_SPACING = (RATE_WINDOW_US + RATE_MARGIN_US) / 1_000_000


async def check_receiver(
    sender: Sender, target: Target, *, pace: Pace | None = None
) -> dict[str, Any]:
    """Run every probe, one after another, within ``BUDGET_SECONDS``; the report."""
    checks: list[dict[str, Any]] = []
    answered: dict[int, float] = {}
    loop = asyncio.get_running_loop()
    valid_id = ids.event_id()
    valid_body = _body(target, valid_id, "valid")
    deadline = loop.time() + BUDGET_SECONDS
    for index, probe in enumerate(probes_of(target)):
        if probe.request is _valid:
            event_id, body = valid_id, valid_body  # duplicate_id resends exactly these
        else:
            event_id = ids.event_id()
            body = _body(target, event_id, probe.name)
        remaining = deadline - loop.time()
        if remaining <= 0:
            checks.append(_not_sent(probe))
            continue
        try:
            async with asyncio.timeout(remaining):
                await _paced(pace, index, answered)
                headers, sent = probe.request(target, body, event_id)
                result = await sender.send(target.url, headers, sent, _probe_auth(probe, target))
        except TimeoutError:
            checks.append(_not_sent(probe))
            continue
        finally:
            answered[index] = loop.time()
        if probe.without_auth:
            checks.append(_grade_auth(probe, result, bool(checks) and checks[0]["passed"]))
        else:
            checks.append(_grade(probe, result))
    return {"passed": all(check["passed"] for check in checks), "checks": checks}


async def _paced(pace: Pace | None, index: int, answered: Mapping[int, float]) -> None:
    """Wait for probe ``index``'s slot in the rate limit's window, and for the probe
    ``pace.limit`` places before it to be a whole window behind."""
    if pace is None:
        return
    wait = (pace.starts[index] - utcnow()).total_seconds()
    earlier = answered.get(index - pace.limit)
    if earlier is not None:
        wait = max(wait, earlier + _SPACING - asyncio.get_running_loop().time())
    if wait > 0:
        await asyncio.sleep(wait)
