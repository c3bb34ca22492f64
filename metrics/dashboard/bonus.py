"""Bonus payments from a rule: Prolific's bulk-bonus list and MTurk's bonus CSV.

The rule pays ``per_item`` for every item a participant rated and ``per_completion`` for an
accepted completion (status ``completed`` and not excluded by the researcher). Pure functions
over the Participants page's rows (:func:`annotation.participation.selectors.participants_rows`).

Formats (checked against the platforms' documentation):

* **Prolific** — *Bulk bonus payment* takes one ``participant_id,amount`` pair per line, no
  header, the amount in the study's currency with two decimals (``5f1e…,1.20``).
* **MTurk** — a bonus needs the worker, the assignment it is paid for, the amount in US dollars
  as a plain number and a reason the worker reads (``SendBonus``: ``WorkerId``,
  ``AssignmentId``, ``BonusAmount``, ``Reason``); the CSV has those four columns.

Every cell a person can influence (the reason, the platform's ids) goes through
:func:`metrics.core.spreadsheet.formula_safe`, so a reason typed as ``=cmd|…`` reaches the file as
text, not as a formula a spreadsheet runs. No line may pay more than
``PARAEVAL_BONUS_MAX_PER_PERSON`` (:func:`bonus_max_per_person`): a rule that would is refused.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings

from metrics.core.spreadsheet import formula_safe

CENT = Decimal("0.01")


def bonus_max_per_person() -> Decimal:
    """The most one participant may be paid (``PARAEVAL_BONUS_MAX_PER_PERSON``, default 100.00)."""
    return Decimal(str(settings.PARAEVAL_BONUS_MAX_PER_PERSON)).quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class BonusRule:
    per_item: Decimal = Decimal("0")
    per_completion: Decimal = Decimal("0")
    reason: str = "Bonus for your ratings"

    def __post_init__(self):
        for name in ("per_item", "per_completion"):
            value = getattr(self, name)
            if not value.is_finite() or value < 0:
                raise ValueError(f"{name} must be a number ≥ 0")
        if not self.reason.strip():
            raise ValueError("the reason must not be empty (MTurk shows it to the worker)")


@dataclass(frozen=True)
class BonusLine:
    platform: str
    participant_id: str
    session_id: str
    items: int
    accepted: bool
    amount: Decimal


def _accepted(row: Mapping) -> bool:
    return row["status"] == "completed" and row.get("qc_verdict") != "excluded"


def bonus_lines(rows: Iterable[Mapping], rule: BonusRule, *, max_amount: Decimal | None = None) -> list[BonusLine]:
    """One line per participant with a platform id and a positive amount, in the rows' order.

    Raises ``ValueError`` (naming how many and the largest) when the rule would pay anyone more
    than ``max_amount`` (default :func:`bonus_max_per_person`): nothing is listed or downloaded.
    """
    cap = bonus_max_per_person() if max_amount is None else max_amount
    out = []
    for r in rows:
        if not r.get("platform_id") or r.get("platform") not in ("prolific", "mturk"):
            continue
        accepted = _accepted(r)
        amount = (rule.per_item * int(r["items_done"]) + (rule.per_completion if accepted else 0)).quantize(
            CENT, rounding=ROUND_HALF_UP
        )
        if amount > 0:
            out.append(
                BonusLine(
                    r["platform"],
                    r["platform_id"],
                    r.get("platform_session_id") or "",
                    int(r["items_done"]),
                    accepted,
                    amount,
                )
            )
    over = [line for line in out if line.amount > cap]
    if over:
        top = max(over, key=lambda line: line.amount)
        raise ValueError(
            f"this rule would pay {len(over)} participant(s) more than the maximum of {cap} per person "
            f"(the most: {top.amount} to {top.participant_id}); check the amounts, or raise "
            "PARAEVAL_BONUS_MAX_PER_PERSON if a bonus this large is meant"
        )
    return out


def bonus_sums(lines: Iterable[BonusLine]) -> dict[str, dict]:
    """Per platform: how many people and how much in all (shown before the download)."""
    sums: dict[str, dict] = {p: {"people": 0, "total": Decimal("0.00")} for p in ("prolific", "mturk")}
    for line in lines:
        sums[line.platform]["people"] += 1
        sums[line.platform]["total"] += line.amount
    return sums


def prolific_bulk_bonus(lines: Iterable[BonusLine]) -> str:
    """Prolific's bulk bonus text: ``participant_id,amount`` per line, no header."""
    return "".join(
        f"{formula_safe(line.participant_id)},{line.amount}\n" for line in lines if line.platform == "prolific"
    )


def mturk_bonus_csv(lines: Iterable[BonusLine], *, reason: str) -> str:
    """MTurk's bonus CSV: ``WorkerId,AssignmentId,BonusAmount,Reason`` (a line per assignment)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["WorkerId", "AssignmentId", "BonusAmount", "Reason"])
    for line in lines:
        if line.platform == "mturk":
            writer.writerow(
                [formula_safe(cell) for cell in (line.participant_id, line.session_id, str(line.amount), reason)]
            )
    return buffer.getvalue()
