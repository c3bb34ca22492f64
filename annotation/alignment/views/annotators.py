"""The annotator's pages: the task list, the next pair, the guidelines and the alignment grid."""

from __future__ import annotations

from dataclasses import dataclass
from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _

from annotation.alignment.services.drafts import assignment_open
from annotation.enums import Role
from annotation.selectors import ROLE_CONFLICT_HOLD_MESSAGE, user_role_conflict
from annotation.web import end_code_context, member_language_activate, participant_page, study_language_activate

from .. import selectors
from ..models import AlignmentAssignment
from ._shared import grid_payload


def annotator_assignment_required(view):
    """Load ``assignment_id``; only its annotator, while still an annotator of the study, may open it (403)."""

    @login_required
    @participant_page
    @wraps(view)
    def wrapper(request, assignment_id: int, *args, **kwargs):
        found = get_object_or_404(AlignmentAssignment.objects.select_related("pair"), pk=assignment_id)
        assignment = selectors.assignment_for_annotator(assignment_id=assignment_id, user=request.user)
        if assignment is None:
            if found.annotator_id == request.user.pk and user_role_conflict(
                study=found.pair.study_id, user=request.user
            ):
                raise PermissionDenied(ROLE_CONFLICT_HOLD_MESSAGE)
            raise PermissionDenied("This pair is assigned to someone else.")
        study_language_activate(assignment.pair.study)
        return view(request, assignment, *args, **kwargs)

    return wrapper


@dataclass(frozen=True)
class PairRow:
    """One of an annotator's assignments with its pair's number in the study, as the task list shows it."""

    assignment: AlignmentAssignment
    number: int | None


@login_required
@participant_page
def home(request):
    """The annotator's task list: every assigned pair, by study, with its state."""
    member_language_activate(request, Role.ANNOTATOR)
    assignments = list(selectors.assignments_for_annotator(user=request.user))
    numbers = selectors.pair_numbers_for_annotator(user=request.user)
    studies: dict[int, dict] = {}
    for a in assignments:
        entry = studies.setdefault(a.pair.study_id, {"study": a.pair.study, "assignments": [], "done": 0})
        entry["assignments"].append(PairRow(assignment=a, number=numbers.get(a.pk)))
        entry["done"] += a.is_submitted
    for entry in studies.values():
        if entry["done"] == len(entry["assignments"]):
            entry["end"] = end_code_context(user=request.user, study=entry["study"])
    following = selectors.assignment_next_for_annotator(user=request.user)
    nxt = None if following is None else PairRow(assignment=following, number=numbers.get(following.pk))
    return render(
        request, "alignment/home.html", {"studies": list(studies.values()), "next": nxt, "total": len(assignments)}
    )


@login_required
@participant_page
def next_task(request):
    nxt = selectors.assignment_next_for_annotator(user=request.user)
    if nxt is None:
        member_language_activate(request, Role.ANNOTATOR)
        messages.info(request, _("You have no pairs left to align. Thank you!"))
        return redirect("alignment:home")
    return redirect("alignment:grid", assignment_id=nxt.pk)


@login_required
@participant_page
def guidelines(request):
    member_language_activate(request, Role.ANNOTATOR)
    return render(request, "alignment/guidelines.html")


@annotator_assignment_required
def grid(request, assignment):
    """The alignment grid of one assigned pair (editable until submitted)."""
    from django.middleware.csrf import get_token

    assignment_open(assignment=assignment)
    pair = assignment.pair
    readonly = assignment.is_submitted
    nxt = selectors.assignment_next_for_annotator(user=request.user, after=assignment)
    mine = list(
        selectors.assignments_for_annotator(user=request.user)
        .filter(pair__study=pair.study)
        .values_list("pk", flat=True)
    )
    position = mine.index(assignment.pk) + 1 if assignment.pk in mine else None
    data = grid_payload(
        pair=pair,
        label=str(position or ""),
        links={"sure": assignment.sure, "possible": assignment.possible},
        automatic=selectors.automatic_alignment_for(assignment=assignment),
        readonly=readonly,
        revision=assignment.revision,
        active_seconds=assignment.active_seconds,
        csrf_token=get_token(request),
        urls={
            "draft": reverse("alignment-api:assignment_draft", kwargs={"assignment_id": assignment.pk}),
            "submit": reverse("alignment-api:assignment_submit", kwargs={"assignment_id": assignment.pk}),
            "after_submit": reverse("alignment:grid", kwargs={"assignment_id": nxt.pk})
            if nxt
            else reverse("alignment:home"),
        },
    )
    return render(
        request,
        "alignment/grid.html",
        {
            "assignment": assignment,
            "pair": pair,
            "study": pair.study,
            "grid_data": data,
            "readonly": readonly,
            "next": nxt,
            "position": position,
            "count": len(mine),
        },
    )
