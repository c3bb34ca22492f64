"""Signature escaping and :func:`parse_signature` (the format is in :mod:`metrics.core.base`)."""

from __future__ import annotations

from typing import Any


def escape(text: str) -> str:
    return text.replace("%", "%25").replace("|", "%7C")


def _unescape(text: str) -> str:
    return text.replace("%7C", "|").replace("%7c", "|").replace("%25", "%")


# --------------------------------------------------------------------------- signature parsing


def parse_signature(signature: str) -> dict[str, Any]:
    """Read a signature back into a dict.

    Every field becomes ``key -> value`` (strings, unescaped) except ``res``,
    which becomes ``{"res": {name: hash, ...}}`` (empty when the metric has no
    resources). Raises :class:`ValueError` on text that is not a signature.
    """
    out: dict[str, Any] = {"res": {}}
    for part in signature.split("|"):
        key, sep, value = part.partition(":")
        if not sep or not key:
            raise ValueError(f"not a paraeval signature field: {part!r}")
        value = _unescape(value)
        if key == "res":
            name, eq, digest = value.partition("=")
            if not eq:
                raise ValueError(f"bad resource field: {part!r}")
            out["res"][name] = digest
        elif key in out:
            raise ValueError(f"duplicate signature field {key!r}")
        else:
            out[key] = value
    if "metric" not in out:
        raise ValueError("signature has no 'metric' field")
    return out
