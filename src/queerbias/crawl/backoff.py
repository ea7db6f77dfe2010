"""How long a server asked us to wait: `Retry-After` in seconds or as an HTTP date (RFC 9110, 10.2.3)."""

from __future__ import annotations

import email.utils


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """Seconds to wait from `now` (Unix time), or None when the header is absent or unreadable."""
    if not value or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(when.timestamp() - now, 0.0)
