"""What an operator asks of a webhook after an outage (``/recover`` and ``/stats``, and their
dashboard pages): the window of time they are about."""

from __future__ import annotations

from datetime import datetime, timedelta

from hookline.domain.recovery import RecoveryWindow
from hookline.errors import ValidationFailed

DEFAULT_STATS_WINDOW = timedelta(hours=24)
"""A webhook's statistics cover this much by default: the last 24 hours."""


def checked_window(
    since: datetime, until: datetime | None, *, now: datetime, retention_days: int
) -> RecoveryWindow:
    """[since, until] with ``until`` at most now (default now), ``since`` within retention and
    before ``until``; a 422 naming the field otherwise."""
    end = min(until, now) if until is not None else now
    oldest = now - timedelta(days=retention_days)
    if since < oldest:
        raise ValidationFailed.for_field(
            "since", f"since must be within the retention period ({retention_days} days)"
        )
    if since > now:
        raise ValidationFailed.for_field("since", "since must not be in the future")
    if end < oldest:
        raise ValidationFailed.for_field(
            "until", f"until must be within the retention period ({retention_days} days)"
        )
    if since > end:
        raise ValidationFailed.for_field("until", "until must not be before since")
    return RecoveryWindow(since, end)
