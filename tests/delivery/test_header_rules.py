"""Custom header rules (``delivery.header_rules``) as input validation (``domain.
webhook_routing``) and at send time (``signing.headers_from_plain``), held by properties over
names and values to an oracle written from the contract, not from the code."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hookline.delivery.header_rules import sendable
from hookline.delivery.signing import headers_from_plain
from hookline.domain.webhook_routing import normalize_header_patch, normalize_headers

TOKEN_CHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
SET_BY_HOOKLINE = {"content-type", "content-length", "host", "user-agent", "connection"}
SET_BY_HOOKLINE |= {"transfer-encoding"}
CONTROL = {"expect", "te", "trailer", "upgrade", "keep-alive", "proxy-connection"}
CONTROL |= {"http2-settings", "via", "max-forwards", "forwarded"}
PREFIXES = ("webhook-", "proxy-", "content-")
KNOWN = sorted(SET_BY_HOOKLINE | CONTROL) + [f"{prefix}x" for prefix in PREFIXES]
KNOWN += ["content-encoding", "proxy-authorization", "authorization", "x-api-key", "x-expect"]


def _any_case(draw: st.DrawFn, name: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(name), max_size=len(name)))
    return "".join(c.upper() if flip else c for c, flip in zip(name, flips, strict=True))


@st.composite
def names(draw: st.DrawFn) -> str:
    """Refused and allowed names in any case, random tokens, and any text at all."""
    kind = draw(st.sampled_from(["known", "token", "prefixed", "text"]))
    if kind == "known":
        return _any_case(draw, draw(st.sampled_from(KNOWN)))
    token = draw(st.text(TOKEN_CHARS, min_size=1, max_size=40))
    if kind == "token":
        return token
    if kind == "prefixed":
        return _any_case(draw, draw(st.sampled_from(PREFIXES))) + token
    return draw(st.text(max_size=300))


values = st.one_of(
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=1100),
    st.text(max_size=40),  # any Unicode: controls, tabs, line breaks, non-ASCII
)


def allowed_name(name: str) -> bool:
    lowered = name.lower()
    return (
        bool(name)
        and len(name) <= 256
        and all(c in TOKEN_CHARS for c in name)
        and lowered not in SET_BY_HOOKLINE | CONTROL
        and not lowered.startswith(PREFIXES)
    )


def allowed_value(value: str) -> bool:
    # Surrounding spaces would be stripped by the receiver's parser: not byte for byte.
    return (
        len(value) <= 1024
        and all(" " <= c <= "~" for c in value)
        and not value.startswith(" ")
        and not value.endswith(" ")
    )


@given(name=names(), value=values)
@example(name="Expect", value="100-continue")
@example(name="Upgrade", value="websocket")
@example(name="Content-Encoding", value="gzip")
@example(name="X-Name", value="café")
@example(name="X-Tab", value="a\tb")
@example(name="Authorization", value="Bearer abc")
@example(name="X-Padded", value=" abc ")
@example(name="Via", value="1.1 proxy")
def test_a_header_is_accepted_exactly_when_the_contract_allows_it(name: str, value: str) -> None:
    allowed = allowed_name(name) and allowed_value(value)
    try:
        accepted = normalize_headers({name: value})
    except ValueError as exc:
        assert not allowed, (name, value, exc)
        assert name in str(exc) or repr(name) in str(exc)  # the offending header is named
    else:
        assert allowed and accepted == {name: value}
        value.encode("ascii")  # what is accepted goes out byte for byte
    try:
        normalize_header_patch({name: value})
    except ValueError:
        assert not allowed
    else:
        assert allowed


@given(name=names())
def test_a_patch_may_remove_any_name_a_webhook_could_have_stored(name: str) -> None:
    """``null`` removes a header, also one refused since it was stored (a control header);
    names hookline sets, and non-tokens, were never storable and stay refused."""
    lowered = name.lower()
    never_storable = not allowed_name(name) and (
        lowered in SET_BY_HOOKLINE
        or lowered.startswith("webhook-")
        or not name
        or len(name) > 256
        or any(c not in TOKEN_CHARS for c in name)
    )
    try:
        normalize_header_patch({name: None})
    except ValueError:
        assert never_storable
    else:
        assert not never_storable


@given(stored=st.dictionaries(names(), values, max_size=8))
def test_the_sender_gets_only_allowed_headers_of_what_was_stored(stored: dict[str, str]) -> None:
    """Headers stored before a rule refused them are dropped at send time, never sent."""
    sent = headers_from_plain(orjson.dumps(stored).decode())
    assert sent == sendable(stored)
    assert sent == {n: v for n, v in stored.items() if allowed_name(n) and allowed_value(v)}
    for name, value in sent.items():
        f"{name}: {value}".encode("ascii")


@pytest.mark.parametrize(
    "name", ["Expect", "TE", "Trailer", "Upgrade", "Keep-Alive", "Via", "Max-Forwards"]
)
def test_control_headers_are_refused_naming_the_header(name: str) -> None:
    with pytest.raises(ValueError, match=f"header {name} controls how the request"):
        normalize_headers({name: "x"})
