"""Which custom headers a webhook may send: the rule the API checks at input (``domain.
webhook_routing``) and the senders apply to what is stored (``signing.headers_from_plain``),
so a header stored before a rule existed is dropped at send time instead of sent.

A custom header may only add information. Names hookline sets itself, and names that change
how the request is framed, relayed or decoded (hop-by-hop fields, message framing, content
coding and metadata: RFC 9110 sections 6.6, 7.6.1, 8 and 10.1.1; RFC 9112 section 6) are
refused. Values are visible ASCII and spaces, so what is sent is byte for byte what was stored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

MAX_HEADER_VALUE = 1024
MAX_HEADER_NAME = 256
# What hookline sets itself on every delivery (or the HTTP client does): never overridable.
RESERVED_HEADERS = frozenset(
    {"content-type", "content-length", "host", "user-agent", "connection", "transfer-encoding"}
)
RESERVED_PREFIX = "webhook-"
# Hop-by-hop, framing, expectation and relaying fields: they steer the connection or the
# proxies on the way, not the receiver.
CONTROL_HEADERS = frozenset(
    {
        "expect",
        "te",
        "trailer",
        "upgrade",
        "keep-alive",
        "proxy-connection",
        "http2-settings",
        "via",
        "max-forwards",
        "forwarded",
    }
)
# Proxy control and the body's content coding and metadata: the body is plain JSON.
CONTROL_PREFIXES = ("proxy-", "content-")
# RFC 9110 token characters.
_TOKEN = re.compile(r"\A[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
# Field values: visible ASCII and spaces only.
_VISIBLE_ASCII = re.compile(r"\A[ -~]*\Z")


def name_refusal(name: str) -> str | None:
    """Why ``name`` may not be a custom header, or None when it may."""
    return storable_name_refusal(name) or _control_refusal(name)


def storable_name_refusal(name: str) -> str | None:
    """Why no webhook can ever have held header ``name`` (not a token, or set by hookline),
    or None: a control header may have been stored before it was refused."""
    if not _TOKEN.match(name) or len(name) > MAX_HEADER_NAME:
        return f"header name {name!r} is not an HTTP token (RFC 9110)"
    lowered = name.lower()
    if lowered in RESERVED_HEADERS or lowered.startswith(RESERVED_PREFIX):
        return f"header {name} is set by hookline and cannot be overridden"
    return None


def _control_refusal(name: str) -> str | None:
    lowered = name.lower()
    if lowered in CONTROL_HEADERS or lowered.startswith(CONTROL_PREFIXES):
        return (
            f"header {name} controls how the request is framed, relayed or decoded "
            "(hop-by-hop, proxy, framing or content coding) and cannot be set"
        )
    return None


def value_refusal(name: str, value: str) -> str | None:
    """Why ``value`` may not be sent as header ``name``, or None when it may."""
    if len(value) > MAX_HEADER_VALUE:
        return f"header {name}'s value must be at most {MAX_HEADER_VALUE} characters"
    if value != value.strip(" "):
        # A receiver's HTTP parser strips them, so the value would not arrive as stored.
        return f"header {name}'s value may not start or end with a space"
    if not _VISIBLE_ASCII.match(value):
        return (
            f"header {name}'s value may hold only visible ASCII characters and spaces "
            "(no CR, LF, tab or other control characters, no non-ASCII characters)"
        )
    return None


def refusal(name: str, value: str) -> str | None:
    return name_refusal(name) or value_refusal(name, value)


def sendable(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` without those the rules refuse (stored before the rule existed)."""
    return {name: value for name, value in headers.items() if refusal(name, value) is None}


def any_case(text: str) -> str:
    """An ECMA-262 regex matching ``text`` (letters, digits and "-") in any case: JSON Schema
    patterns have no case-insensitive flag, so each letter is spelled as a class."""
    # "-" needs no escape (and "\\-" is a syntax error in a Unicode-mode ECMA-262 regex).
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in text)


def names_pattern(names: frozenset[str], prefixes: tuple[str, ...]) -> str:
    """An ECMA-262 regex matching ``names`` exactly and any name starting with ``prefixes``,
    in any case, for the OpenAPI schema."""
    starts = "|".join(any_case(prefix) for prefix in prefixes)
    exact = "|".join(any_case(name) for name in sorted(names))
    return f"^(?:{starts}|(?:{exact})$)"


RESERVED_PATTERN = names_pattern(RESERVED_HEADERS, (RESERVED_PREFIX,))
CONTROL_PATTERN = names_pattern(CONTROL_HEADERS, CONTROL_PREFIXES)
# No surrounding spaces: a receiver's parser would strip them.
VALUE_PATTERN = "^(?:[!-~](?:[ -~]*[!-~])?)?$"
