"""The schema, as SQLAlchemy Core tables.

Core rather than ORM: the hot paths are a couple of INSERTs per request, and explicit statements
keep them lean and make every transaction boundary visible in the caller.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    false,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from hookline.timeutil import iso

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
metadata = MetaData(naming_convention=NAMING)


class UTCDateTime(TypeDecorator[datetime]):
    """Timestamps stored in UTC and always returned timezone-aware (SQLite forgets the zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):  # raw SQLite text, e.g. from a textual query
            value = datetime.fromisoformat(value)
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

    def result_processor(self, dialect: Dialect, coltype: Any) -> Any:
        if dialect.name == "sqlite":
            return _sqlite_utc
        return super().result_processor(dialect, coltype)

    def bind_processor(self, dialect: Dialect) -> Any:
        if dialect.name == "sqlite":
            return _sqlite_text
        return super().bind_processor(dialect)


def _sqlite_utc(value: str | None) -> datetime | None:
    """SQLite's stored text (``2026-11-22 15:04:05.123000``, UTC) as an aware datetime, in one
    C call, cheaper than SQLAlchemy's parser and then ``process_result_value``'s
    ``replace(tzinfo=...)``."""
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value + "+00:00")  # timezone.utc itself, no replace()
    except ValueError:  # text that carries its own offset
        return datetime.fromisoformat(value).astimezone(UTC)


def _sqlite_text(value: datetime | None) -> str | None:
    """``value`` as SQLite stores it (``2026-11-22 15:04:05.123000``, UTC), in one C call, not
    ``process_bind_param`` and then SQLAlchemy's formatting. The same text, as
    ``tests/storage/test_models.py`` holds."""
    if value is None:
        return None
    if value.tzinfo is not UTC:
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value.isoformat(" ", "microseconds")[:-6]  # without its "+00:00"


class SpelledTime(TypeDecorator[str]):
    """A ``UTCDateTime`` column read as the contract's text (``timeutil.iso``), for the reads
    whose rows go straight into a response: ``type_coerce(column, SpelledTime())``.

    On SQLite the stored text is already that instant in UTC, to the microsecond
    (``_sqlite_text``), so the spelling is a slice of it, cheaper than decoding it
    (``_sqlite_utc``) and spelling the datetime (``iso``). Text of any other shape
    (``CURRENT_TIMESTAMP``'s, or carrying an offset) takes that longer way;
    tests/storage/test_models.py holds the two to the same text."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def result_processor(self, dialect: Dialect, coltype: Any) -> Any:
        return _sqlite_spelled if dialect.name == "sqlite" else iso


def _sqlite_spelled(value: str | None) -> str | None:
    # "2026-11-22 15:04:05.123456" -> "2026-11-22T15:04:05.123Z" (milliseconds truncated, as iso).
    if (
        value is not None
        and len(value) == 26
        and value[10] == " "
        and value[19] == "."
        and value[20:].isdigit()
    ):
        return f"{value[:10]}T{value[11:23]}Z"
    return iso(_sqlite_utc(value))


Json = JSON().with_variant(JSONB(), "postgresql")

accounts = Table(
    "accounts",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("name", String(200), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    # The account's settings (GET/PATCH /v1/account; bounds in domain.accounts).
    Column("retention_days", Integer, nullable=False, server_default=text("30")),
    Column("max_call_seconds", Integer, nullable=False, server_default=text("3600")),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("account_id", String(64), ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(200), nullable=False),
    Column("prefix", String(32), nullable=False),
    # SHA-256 hex of the whole key; the key itself is never stored.
    Column("key_hash", String(64), nullable=False, unique=True),
    Column("scopes", Json, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("last_used_at", UTCDateTime(), nullable=True),
    Column("revoked_at", UTCDateTime(), nullable=True),
    Index(None, "account_id"),
)

users = Table(
    "users",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("account_id", String(64), ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False),
    Column("email", String(254), nullable=False, unique=True),
    Column("password_hash", String(255), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Index(None, "account_id"),
)

dashboard_sessions = Table(
    "dashboard_sessions",
    metadata,
    # SHA-256 hex of the session cookie's value.
    Column("id", String(64), primary_key=True),
    Column("user_id", String(64), ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("csrf_token", String(64), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("expires_at", UTCDateTime(), nullable=False),
    Index(None, "user_id"),
)

# One-time links for people: an invitation to join an account ("invite", 24 h) or a password
# reset ("reset", 1 h). Only the SHA-256 of the link's token is stored; a used link is deleted.
login_tokens = Table(
    "login_tokens",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("purpose", String(16), nullable=False),
    Column("account_id", String(64), ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False),
    Column("email", String(254), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("expires_at", UTCDateTime(), nullable=False),
    Index(None, "account_id", "email"),
    Index(None, "expires_at"),
)

# Dashboard throttles (log-in, sign-up, password reset), shared by every process through the
# database: one row per counted attempt, keyed by SHA-256 digests of the client address and of
# the e-mail address, swept once older than the longest window.
auth_attempts = Table(
    "auth_attempts",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("scope", String(16), nullable=False),
    Column("address_key", String(64), nullable=False),
    Column("email_key", String(64), nullable=True),
    Column("created_at", UTCDateTime(), nullable=False),
    Index(None, "scope", "address_key", "created_at"),
    Index(None, "scope", "email_key", "created_at"),
    Index(None, "created_at"),
)

contacts = Table(
    "contacts",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("account_id", String(64), ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False),
    Column("first_name", String(100), nullable=False),
    Column("last_name", String(100), nullable=True),
    Column("phone_number", String(32), nullable=False),
    Column("email", String(254), nullable=True),
    Column("company", String(200), nullable=True),
    Column("tags", Json, nullable=False),
    Column("notes", Text, nullable=True),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
    Column("do_not_call", Boolean, nullable=False, server_default=false()),
    Column("do_not_call_reason", String(200), nullable=True),
    # Ids are UUIDv7, so (account_id, id) is also creation order: cursor pagination walks it.
    Index(None, "account_id", "id"),
    Index(None, "account_id", "phone_number"),
    Index(None, "account_id", "email"),
)

calls = Table(
    "calls",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("account_id", String(64), ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False),
    Column("contact_id", String(64), ForeignKey("contacts.id", ondelete="SET NULL"), nullable=True),
    Column("call_type", String(16), nullable=False),
    Column("customer_phone_number", String(32), nullable=False),
    Column("call_status", String(16), nullable=False),
    Column("call_started_at", UTCDateTime(), nullable=False),
    Column("call_ended_at", UTCDateTime(), nullable=True),
    Column("duration_seconds", Integer, nullable=True),
    Column("metadata", Json, nullable=True),
    # The outcome reported on completion (``analysis``), or NULL; assistant_id is also a column
    # of its own so that GET /v1/calls?assistant_id= is an index look-up.
    Column("analysis", Json, nullable=True),
    Column("assistant_id", String(200), nullable=True),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
    # When the server ends the call if it is still in progress: its start plus the account's
    # max_call_seconds at that moment. The sweeper walks (call_status, deadline_at).
    Column("deadline_at", UTCDateTime(), nullable=True),
    Index(None, "account_id", "id"),
    Index(None, "contact_id"),
    Index(None, "account_id", "assistant_id", "id"),
    Index(None, "call_status", "deadline_at"),
)

# Every version of an account's call analysis schema (PUT /v1/call-analysis-schema); the
# highest is the current one. Versions are never changed or deleted: a call's outcome names
# the version it was validated against.
call_analysis_schemas = Table(
    "call_analysis_schemas",
    metadata,
    Column(
        "account_id", String(64), ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("schema", Json, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)

webhooks = Table(
    "webhooks",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("account_id", String(64), ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False),
    Column("url", String(2048), nullable=False),
    Column("name", String(200), nullable=True),
    Column("events", Json, nullable=False),
    Column("is_active", Boolean, nullable=False),
    # Signing secrets, encrypted with HOOKLINE_SECRET_KEY (crypto.SecretBox): each an HMAC
    # secret (whsec_) or an Ed25519 signing key (whsk_), signing v1 or v1a (delivery.signing).
    Column("secret_enc", Text, nullable=False),
    Column("previous_secret_enc", Text, nullable=True),
    Column("previous_secret_expires_at", UTCDateTime(), nullable=True),
    # The public key (whpk_) of an Ed25519 webhook's current signing key; NULL for HMAC.
    Column("public_key", String(64), nullable=True),
    Column("disabled_reason", String(500), nullable=True),
    # Start of the current run of consecutive failures; NULL after any success.
    Column("failing_since", UTCDateTime(), nullable=True),
    # The endpoint's circuit (delivery.retry.circuit_open): failed attempts since its last
    # success, and while open, the earliest moment a claim may take its next attempt (a probe).
    Column("consecutive_failures", Integer, nullable=False, server_default=text("0")),
    Column("next_probe_at", UTCDateTime(), nullable=True),
    # Custom delivery headers: a JSON object encrypted like the secrets, or NULL for none; their
    # names in clear (shown, values masked, by every read without decrypting).
    Column("headers_enc", Text, nullable=True),
    Column("header_names", Json, nullable=True),
    # A CEL expression over the delivered body; a delivery is created only when it is true.
    Column("filter", String(1024), nullable=True),
    # Evaluations of that filter at fan-out cut by the filter limits (delivery.filters).
    Column("filter_errors", Integer, nullable=False, server_default=text("0")),
    # At most this many attempts start in any one-second window; NULL for no limit.
    Column("rate_limit", Integer, nullable=True),
    # The rate limit's sliding window: [[start in epoch microseconds, attempts], ...] of the
    # last second, written by the claim that started them (manager._claim_rate_limited).
    Column("rate_starts", Json, nullable=True),
    # When the webhook's last receiver check started: one per ``domain.outbound``'s interval.
    Column("conformance_at", UTCDateTime(), nullable=True),
    # How hookline authenticates to the receiver (OAuth2 client credentials or mTLS): the whole
    # object encrypted like the secrets, and the object as shown (secrets masked), in clear.
    Column("auth_enc", Text, nullable=True),
    Column("auth_shown", Json, nullable=True),
    # What the webhook receives of an event (delivery.shaping): paths left out of the body
    # (a JSON list; NULL for a webhook made before them) and "full" or "thin".
    Column("redact", Json, nullable=True),
    Column("payload", String(8), nullable=False, server_default=text("'full'")),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
    Index(None, "account_id", "id"),
    Index(
        "ix_webhooks_rate_limited",
        "id",
        sqlite_where=text("rate_limit IS NOT NULL"),
        postgresql_where=text("rate_limit IS NOT NULL"),
    ),
)

events = Table(
    "events",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("account_id", String(64), ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False),
    Column("type", String(64), nullable=False),
    Column("data", Json, nullable=False),
    Column("previous_attributes", Json, nullable=True),
    Column("created_at", UTCDateTime(), nullable=False),
    # The outbox flag: written false in the caller's transaction; the dispatcher fans the event
    # out into deliveries and sets it true in one transaction of its own.
    Column("dispatched", Boolean, nullable=False),
    # webhook.test events go to one webhook only.
    Column("target_webhook_id", String(64), nullable=True),
    # Commit order, for GET /v1/events/stream: numbered by the dispatcher as it fans events out,
    # one dispatch at a time (DeliveryStore.number_and_claim); NULL until then.
    Column("stream_seq", BigInteger, nullable=True),
    # Alerts (webhook.disabled, delivery.exhausted) are about one webhook: never delivered to it.
    Column("about_webhook_id", String(64), nullable=True),
    # W3C traceparent of the span that wrote the event; its delivery attempts join that trace.
    Column("trace_context", String(256), nullable=True),
    Index(None, "account_id", "id"),
    Index(None, "account_id", "stream_seq"),
    Index(None, "stream_seq"),
    Index(
        "ix_events_undispatched",
        "id",
        sqlite_where=text("dispatched = 0"),
        postgresql_where=text("dispatched = false"),
    ),
    Index(None, "created_at"),
)

deliveries = Table(
    "deliveries",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("account_id", String(64), ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False),
    Column("webhook_id", String(64), ForeignKey("webhooks.id", ondelete="CASCADE"), nullable=False),
    Column("event_id", String(64), ForeignKey("events.id", ondelete="CASCADE"), nullable=False),
    Column("event_type", String(64), nullable=False),
    # pending | succeeded | failed | cancelled
    Column("status", String(16), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_at", UTCDateTime(), nullable=True),
    Column("last_status_code", Integer, nullable=True),
    Column("last_error", String(1000), nullable=True),
    # A claim: the worker holding it, until when; renewed by heartbeat.
    Column("leased_by", String(64), nullable=True),
    Column("leased_until", UTCDateTime(), nullable=True),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
    Index(None, "webhook_id", "id"),
    Index(None, "event_id"),
    Index(
        "ix_deliveries_due",
        "next_attempt_at",
        sqlite_where=text("status = 'pending'"),
        postgresql_where=text("status = 'pending'"),
    ),
    # Claims probe each webhook's own queue, so one endpoint's backlog is never scanned to reach
    # another's deliveries (a hanging endpoint must not slow the others' claims); in the claim's
    # order (next_attempt_at, id), so a claim reads only the rows it takes, never sorts a backlog.
    Index(
        "ix_deliveries_webhook_due",
        "webhook_id",
        "next_attempt_at",
        "id",
        sqlite_where=text("status = 'pending'"),
        postgresql_where=text("status = 'pending'"),
    ),
    # Half of each page left free by INSERTs, for the lease's new version: the lease touches no
    # indexed column, so with room on the row's page it is a HOT update and writes no index
    # entry (migration 0008_lease_room).
    postgresql_with={"fillfactor": 50},
)

delivery_attempts = Table(
    "delivery_attempts",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column(
        "delivery_id", String(64), ForeignKey("deliveries.id", ondelete="CASCADE"), nullable=False
    ),
    Column("started_at", UTCDateTime(), nullable=False),
    Column("duration_ms", Integer, nullable=False),
    Column("status_code", Integer, nullable=True),
    Column("error", String(1000), nullable=True),
    Column("response_body", Text, nullable=True),
    Column("succeeded", Boolean, nullable=False),
    # Denormalised from the delivery, for statistics: a window of one webhook's attempts is
    # one index range (ix_delivery_attempts_webhook_id_started_at).
    Column("webhook_id", String(64), nullable=True),
    Index(None, "delivery_id"),
    Index(None, "webhook_id", "started_at"),
)

# Statistics, maintained in the transaction that records attempts (delivery.stats): attempts
# counted per webhook, time bucket (a minute and an hour: ``span`` seconds), status ("200",
# "error") and latency bin, so a window's figures are a sum over a few hundred rows, never a
# scan of every attempt.
attempt_rollups = Table(
    "attempt_rollups",
    metadata,
    Column(
        "webhook_id",
        String(64),
        ForeignKey("webhooks.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("span", Integer, primary_key=True, autoincrement=False),
    Column("bucket_start", UTCDateTime(), primary_key=True),
    Column("status", String(8), primary_key=True),
    Column("latency_bin", Integer, primary_key=True, autoincrement=False),
    Column("attempts", Integer, nullable=False),
    Index(None, "bucket_start"),
)

idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column(
        "account_id", String(64), ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("key", String(255), primary_key=True),
    Column("request_hash", String(64), nullable=False),
    # NULL while the first request is in flight.
    Column("response_status", Integer, nullable=True),
    Column("response_headers", Json, nullable=True),
    Column("response_body", Text, nullable=True),
    Column("created_at", UTCDateTime(), nullable=False),
    Index(None, "created_at"),
)

# One row per open GET /v1/events/stream: a key's streams are counted here, whichever process
# serves them. A live stream's process pushes expires_at forward; a dead process's rows expire.
event_streams = Table(
    "event_streams",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("account_id", String(64), ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False),
    Column("key_id", String(64), ForeignKey("api_keys.id", ondelete="CASCADE"), nullable=False),
    Column("opened_at", UTCDateTime(), nullable=False),
    Column("expires_at", UTCDateTime(), nullable=False),
    Index(None, "key_id"),
    Index(None, "expires_at"),
)

workers = Table(
    "workers",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("hostname", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("started_at", UTCDateTime(), nullable=False),
    Column("heartbeat_at", UTCDateTime(), nullable=False),
)

# A contact's erasure (domain.erasures, delivery.erasure): the request deletes the contact and
# writes this row; a worker's job then removes the contact's data everywhere else, batch by
# batch, each batch committed with its progress here, so a crash resumes where it stopped.
# It never holds the contact's personal data: only ids.
erasures = Table(
    "erasures",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("account_id", String(64), ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False),
    Column("contact_id", String(64), nullable=False),
    # pending | running | done
    Column("status", String(16), nullable=False),
    # The job's step (calls | events | idempotency | notify | done) and its position in it.
    Column("phase", String(16), nullable=False),
    Column("position", String(255), nullable=True),
    # The calls of the contact, taken before its row went (their contact_id is then NULL).
    Column("call_ids", Json, nullable=False),
    # What was purged: {"calls", "events", "deliveries", "attempts", "idempotent_responses"}.
    Column("counts", Json, nullable=False),
    # The purged events each webhook had received: {webhook id: [event id, ...]}.
    Column("received", Json, nullable=False),
    # The contact.erased events sent: [{"webhook_id", "event_id"}, ...].
    Column("notices", Json, nullable=False),
    # Which worker runs the job, until when (renewed every batch; taken over once past).
    Column("leased_by", String(64), nullable=True),
    Column("leased_until", UTCDateTime(), nullable=True),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("finished_at", UTCDateTime(), nullable=True),
    Index(None, "account_id", "contact_id"),
    Index(
        "ix_erasures_unfinished",
        "created_at",
        sqlite_where=text("status <> 'done'"),
        postgresql_where=text("status <> 'done'"),
    ),
)
