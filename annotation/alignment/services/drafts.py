"""Writes: an annotator's work on one pair: opening it, autosaved drafts, the submission.

Also the limit on links per pair, which the API checks before it reads any coordinate.
"""

from __future__ import annotations

import math

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from annotation.alignment.models import links_json

from ..enums import AssignmentStatus
from ..models import AlignmentAssignment, AlignmentPair


class AssignmentConflict(Exception):
    """The draft changed since the browser loaded it (another tab saved newer work)."""

    def __init__(self, current_revision: int):
        self.current_revision = current_revision
        super().__init__(
            gettext("this pair was saved elsewhere (revision %(revision)s); reload to continue")
            % {"revision": current_revision}
        )


class AssignmentClosed(Exception):
    """The assignment is submitted; its alignment can no longer change."""


def assignment_open(*, assignment: AlignmentAssignment) -> AlignmentAssignment:
    """Record the first time the annotator opened the pair (server clock)."""
    if assignment.opened_at is None:
        now = timezone.now()
        AlignmentAssignment.objects.filter(pk=assignment.pk, opened_at__isnull=True).update(
            opened_at=now, updated_at=now
        )
        assignment.refresh_from_db()
    return assignment


def links_limit(pair: AlignmentPair) -> int:
    """Most links one annotator may store on ``pair``: one per grid cell (sure and possible are
    disjoint), and never more than ``PARAEVAL_ALIGNMENT_MAX_LINKS`` (a draft is stored and
    re-validated on every autosave, so its size is the cost of a request)."""
    return min(len(pair.tokens1) * len(pair.tokens2), settings.PARAEVAL_ALIGNMENT_MAX_LINKS)


def links_count_check(pair: AlignmentPair, n_links: int) -> None:
    """Raise ``ValidationError`` when ``n_links`` exceeds :func:`links_limit` — before any
    coordinate is looked at, so that a million-link draft costs no more than counting it."""
    limit = links_limit(pair)
    if n_links > limit:
        n1, n2 = len(pair.tokens1), len(pair.tokens2)
        raise ValidationError(
            f"{n_links:,} links is too many for pair {pair.external_id}: its {n1}×{n2} grid takes at most "
            f"{limit:,} (one per cell; at most {settings.PARAEVAL_ALIGNMENT_MAX_LINKS:,} per pair)"
        )


def _validated_links(assignment: AlignmentAssignment, sure, possible) -> tuple[list, list]:
    links_count_check(assignment.pair, len(sure) + len(possible))
    probe = AlignmentAssignment(sure=sure, possible=possible)
    probe.clean_fields(exclude=[f.name for f in AlignmentAssignment._meta.fields if f.name not in ("sure", "possible")])
    probe.links_fit(assignment.pair)
    return links_json({tuple(x) for x in sure}), links_json({tuple(x) for x in possible})


def _active(value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValidationError("active_seconds must be a number") from None
    if not math.isfinite(v) or v < 0 or v > 7 * 24 * 3600:
        raise ValidationError("active_seconds must be between 0 and one week")
    return v


def _locked(assignment: AlignmentAssignment, revision: int) -> AlignmentAssignment:
    locked = AlignmentAssignment.objects.select_for_update().select_related("pair").get(pk=assignment.pk)
    if locked.status == AssignmentStatus.SUBMITTED:
        raise AssignmentClosed(gettext("this pair is already submitted"))
    if revision != locked.revision:
        raise AssignmentConflict(locked.revision)
    return locked


@transaction.atomic
def assignment_draft_save(
    *,
    assignment: AlignmentAssignment,
    sure: list,
    possible: list,
    revision: int,
    active_seconds: float,
) -> AlignmentAssignment:
    """Autosave: store the draft links if ``revision`` is the stored one; return the new revision.

    Raises :class:`AssignmentConflict` when another tab saved in between,
    :class:`AssignmentClosed` once submitted, ``ValidationError`` for links
    outside the grid. Active seconds never go down (the page counts on from the
    stored value).
    """
    locked = _locked(assignment, revision)
    locked.sure, locked.possible = _validated_links(locked, sure, possible)
    locked.active_seconds = max(locked.active_seconds, _active(active_seconds))
    locked.revision += 1
    locked.status = AssignmentStatus.IN_PROGRESS
    locked.draft_saved_at = timezone.now()
    if locked.opened_at is None:
        locked.opened_at = locked.draft_saved_at
    locked.full_clean(validate_constraints=False)
    locked.save()
    return locked


@transaction.atomic
def assignment_submit(
    *,
    assignment: AlignmentAssignment,
    sure: list,
    possible: list,
    revision: int,
    active_seconds: float,
) -> AlignmentAssignment:
    """Submit the final alignment: it becomes this annotator's gold for the pair and is frozen.

    Timing: ``server_seconds`` = submission time − first opening (server clock).
    """
    locked = _locked(assignment, revision)
    now = timezone.now()
    locked.sure, locked.possible = _validated_links(locked, sure, possible)
    locked.active_seconds = max(locked.active_seconds, _active(active_seconds))
    locked.revision += 1
    locked.status = AssignmentStatus.SUBMITTED
    locked.submitted_at = now
    if locked.opened_at is None:
        locked.opened_at = now
    locked.server_seconds = (now - locked.opened_at).total_seconds()
    locked.full_clean(validate_constraints=False)
    locked.save()
    return locked
