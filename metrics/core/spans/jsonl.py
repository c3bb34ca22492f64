"""ESA annotations as JSON Lines: the export side of the format that ``annotation.judging.protocols.esa.parsers`` reads.

One line per annotation (docs/protocols-esa-ranking.md)::

    {"judge": …, "original_id": …, "system": …, "score": …, "error_spans": [...],
     "proposed_spans": [...], "seconds": …, "original": …, "candidate": …}

``style="paraeval"`` writes spans as ``{"side", "start", "end", "severity", "category"}``,
end exclusive, in code points (``offsets="codepoint"``) or JavaScript's UTF-16 units
(``offsets="utf16"``, stated in the line); the ``[missing]`` marker as ``{"missing": true}``.
``style="appraise"`` writes what Appraise's ESA page stores: ``start_i``/``end_i`` with an
inclusive end in UTF-16 units, ``"missing"`` for the marker, ``error_type`` for the
category — candidate-side spans only, since Appraise has no spans on the source; an
annotation with spans on the original cannot be written in that style (``ValueError``).
Reading a line back gives the same spans (tested).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .model import ErrorSpan, EsaAnnotation
from .offsets import codepoint_to_utf16

__all__ = ["annotation_line", "span_object"]


def span_object(span: ErrorSpan, text: str, *, style: str = "paraeval", offsets: str = "codepoint") -> dict[str, Any]:
    """One span as a JSON object of ``style`` (the module docstring); ``text`` is the span's side."""
    if style == "appraise":
        if span.side != "candidate":
            raise ValueError("Appraise stores spans on the candidate only; this annotation has spans on the original")
        if span.missing:
            return {"start_i": "missing", "end_i": "missing", "severity": span.severity, "error_type": span.category}
        return {
            "start_i": codepoint_to_utf16(text, span.start),
            "end_i": codepoint_to_utf16(text, span.end) - 1,
            "severity": span.severity,
            "error_type": span.category,
        }
    if style != "paraeval":
        raise ValueError(f"style must be paraeval or appraise, not {style!r}")
    if span.missing:
        out: dict[str, Any] = {"missing": True, "severity": span.severity}
    else:
        start, end = span.start, span.end
        if offsets == "utf16":
            start, end = codepoint_to_utf16(text, start), codepoint_to_utf16(text, end)
        elif offsets != "codepoint":
            raise ValueError(f"offsets must be codepoint or utf16, not {offsets!r}")
        out = {"side": span.side, "start": start, "end": end, "severity": span.severity}
    if span.category is not None:
        out["category"] = span.category
    return out


def annotation_line(
    annotation: EsaAnnotation,
    original: str,
    candidate: str,
    *,
    style: str = "paraeval",
    offsets: str = "codepoint",
    include_texts: bool = True,
) -> str:
    """The JSON line of one annotation (no newline); ``original``/``candidate`` are its texts.

    ``annotation.original`` is written as ``original_id``. With ``style="appraise"`` the
    offsets are UTF-16 whatever ``offsets`` says.
    """
    texts = {"original": original, "candidate": candidate}

    def spans(items: Sequence[ErrorSpan]) -> list[dict[str, Any]]:
        return [span_object(s, texts[s.side], style=style, offsets=offsets) for s in items]

    line: dict[str, Any] = {
        "judge": annotation.judge,
        "original_id": annotation.original,
        "system": annotation.system,
        "score": annotation.score,
        "error_spans": spans(annotation.spans),
    }
    if annotation.proposed:
        line["proposed_spans"] = spans(annotation.proposed)
    if annotation.seconds is not None:
        line["seconds"] = annotation.seconds
    if style == "paraeval" and offsets == "utf16":
        line["offsets"] = "utf16"
    if include_texts:
        line["original"], line["candidate"] = original, candidate
    return json.dumps(line, ensure_ascii=False)
