"""CSV cells that spreadsheets cannot turn into formulas: the one rule every CSV export uses.

A cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return) is run as
a formula by Excel, LibreOffice and Google Sheets ("CSV injection", OWASP): ``=cmd|' /C calc'!A0``
in a paraphrase, a system name or a bonus reason would run on the researcher's machine. Such a
text cell gets a leading ``'``, which spreadsheets show as text. Numbers stay numbers (a negative
z-score is passed as a float, never as text). Judging, alignment, metric, report and bonus exports
all call :func:`formula_safe`, so the rule cannot drift between them.
"""

from __future__ import annotations

__all__ = ["FORMULA_PREFIXES", "formula_safe"]

FORMULA_PREFIXES: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")


def formula_safe(value: object) -> object:
    """``value`` with a leading ``'`` if it is text that starts like a formula; anything else unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value
