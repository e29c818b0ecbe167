"""Abuse resistance: rate limits, idempotency keys, body guards (see docs/security.md)."""
