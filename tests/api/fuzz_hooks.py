"""Schemathesis hooks for tests/api/fuzz.py (loaded through ``SCHEMATHESIS_HOOKS``).

An ``Idempotency-Key`` reused with another body is refused (422 ``idempotency_key_reused``), as
the contract says; the fuzzer draws keys from a small space and reuses them by chance. A key the
schema allows is replaced by a fresh one per request, so every case is judged on its own.

A webhook's ``auth`` has rules about content no schema states: mTLS PEMs must be a real
certificate and its key (over an https url), and a secret sent masked (``"********"``) needs a
stored one to keep. Drawn ones are replaced by real PEMs from a test CA (or, without an https
url in the body, by no auth) and a plain secret, so those requests are judged on the rest.

Rules relating the body to stored state or nesting recursively, which the schema leaves unsaid:
a webhook's ``redact`` paths must be in its subscribed event types' bodies (on a PATCH, the
stored ``events``), so well-formed drawn paths are dropped; a call analysis schema must be a
schema in the subset docs/webhooks.md describes, so a drawn object is replaced by a valid one.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import schemathesis

from hookline.domain.validation import NOT_BLANK_PATTERN
from hookline.domain.webhooks import MAX_REDACT_PATH, MAX_REDACT_PATHS
from hookline.guards.idempotency import MAX_KEY_LENGTH
from tests.support.identity import Pki

_NOT_BLANK = re.compile(NOT_BLANK_PATTERN)
_REDACT_PATH = re.compile(r"^data(\.[^.\s]+)+$")
_ANALYSIS_SCHEMA = {"type": "object", "properties": {"intent": {"type": "string"}}}
_PKI = Pki()


def _real_auth(body: dict[str, Any]) -> None:
    auth = body.get("auth")
    if not isinstance(auth, dict):
        return
    if auth.get("type") == "mtls":
        https = str(body.get("url", "")).lower().startswith("https://")
        body["auth"] = _PKI.mtls_auth() if https else None
    elif auth.get("client_secret") == "********":
        auth["client_secret"] = "a-client-secret"


@schemathesis.hook
def before_call(context: Any, case: Any, **kwargs: Any) -> None:
    key = (case.headers or {}).get("Idempotency-Key")
    if isinstance(key, str) and len(key) <= MAX_KEY_LENGTH and _NOT_BLANK.fullmatch(key):
        case.headers["Idempotency-Key"] = uuid.uuid4().hex
    if isinstance(case.body, dict):
        _real_auth(case.body)
        _known_redact(case.body)
        _flagged_reason(case.body)
        if case.method == "PUT" and case.operation.path == "/v1/call-analysis-schema":
            case.body = dict(_ANALYSIS_SCHEMA)


def _flagged_reason(body: dict[str, Any]) -> None:
    """A ``do_not_call_reason`` needs the flag set (on a PATCH, maybe the stored one)."""
    reason = body.get("do_not_call_reason")
    if isinstance(reason, str) and reason and body.get("do_not_call", False) is False:
        body["do_not_call"] = True


def _known_redact(body: dict[str, Any]) -> None:
    redact = body.get("redact")
    if (
        isinstance(redact, list)
        and 0 < len(redact) <= MAX_REDACT_PATHS
        and all(
            isinstance(p, str) and len(p) <= MAX_REDACT_PATH and _REDACT_PATH.fullmatch(p)
            for p in redact
        )
    ):
        body["redact"] = []
