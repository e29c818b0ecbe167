"""Schemathesis hooks for tests/api/fuzz.py (loaded through ``SCHEMATHESIS_HOOKS``).

An ``Idempotency-Key`` reused with another body is refused (422 ``idempotency_key_reused``), as
the contract says; the fuzzer draws keys from a small space and reuses them by chance. A key the
schema allows is replaced by a fresh one per request, so every case is judged on its own.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import schemathesis

from hookline.domain.validation import NOT_BLANK_PATTERN
from hookline.guards.idempotency import MAX_KEY_LENGTH

_NOT_BLANK = re.compile(NOT_BLANK_PATTERN)


@schemathesis.hook
def before_call(context: Any, case: Any, **kwargs: Any) -> None:
    key = (case.headers or {}).get("Idempotency-Key")
    if isinstance(key, str) and len(key) <= MAX_KEY_LENGTH and _NOT_BLANK.fullmatch(key):
        case.headers["Idempotency-Key"] = uuid.uuid4().hex
