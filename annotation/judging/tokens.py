"""Opaque tokens a judge's browser holds: item tokens and signed serve stamps.

An item token is random (``secrets.token_urlsafe``), so it carries no database id
and no order. A serve stamp is the item token plus the server's clock when it
served the item, signed with ``SECRET_KEY``: the submit computes the server time
from serving to submitting without a database write on every page view, and the
judge cannot forge it.
"""

from __future__ import annotations

import secrets
import time
from datetime import UTC, datetime

from django.core import signing

_SALT = "paraeval.judging.serve"


def item_token_new() -> str:
    return secrets.token_urlsafe(16)


def idempotency_key_new() -> str:
    return secrets.token_urlsafe(18)


def serve_stamp_make(item_token: str, *, now: float | None = None) -> str:
    return signing.dumps({"i": item_token, "t": round(time.time() if now is None else now, 3)}, salt=_SALT)


def serve_stamp_read(stamp: str, item_token: str) -> datetime | None:
    """When the item was served, or None if the stamp is forged or for another item."""
    try:
        data = signing.loads(stamp, salt=_SALT)
    except signing.BadSignature:
        return None
    if not isinstance(data, dict) or data.get("i") != item_token or not isinstance(data.get("t"), (int, float)):
        return None
    return datetime.fromtimestamp(data["t"], tz=UTC)
