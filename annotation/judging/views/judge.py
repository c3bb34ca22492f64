"""The judge's pages every protocol shares: their studies, and a study's instructions.

Each protocol's own pages (the absolute protocol's rating page, ESA's, ranking's, side by
side's) are in its package. These render the study's name, the design's criteria and the
protocol's instructions texts only: nothing of a system or a control reaches the browser.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import get_language_bidi
from django.views.decorators.http import require_http_methods

from annotation.enums import Role
from annotation.judging.selectors.design import design_for_study
from annotation.judging.selectors.judge import (
    progress_among_checks,
    studies_for_judge,
)
from annotation.judging.services.assignments import assignment_ensure_for_judge, instructions_mark_seen
from annotation.web import member_language_activate, participant_page

from ..protocols.registry import protocol_for_design
from ..web import assignment_or_page, judged_study_or_404, study_criteria_for_judge, thousands


@login_required
@participant_page
def judge_home(request):
    member_language_activate(request, Role.JUDGE)
    rows = studies_for_judge(judge=request.user)
    for row in rows:
        if row["is_open"] and row["assignment"] is None:
            # Added after the study opened: build their assignment now.
            assignment_ensure_for_judge(study=row["study"], judge=request.user)
    if any(r["is_open"] and r["assignment"] is None for r in rows):
        rows = studies_for_judge(judge=request.user)
    return render(
        request,
        "judging/home.html",
        {"rows": [dict(r, done_text=thousands(r["done"]), total_text=thousands(r["total"])) for r in rows]},
    )


@login_required
@require_http_methods(["GET", "POST"])
@participant_page
def instructions(request, study_id: int):
    """Shown before the first item, and whenever the judge asks (the "?" key)."""
    study = judged_study_or_404(request, study_id)
    assignment = assignment_or_page(request, study)
    if isinstance(assignment, HttpResponse):  # not open to this judge now: that page
        return assignment
    if request.method == "POST":
        instructions_mark_seen(assignment=assignment)
        return redirect("judging:rate", study_id=study.pk)
    design = design_for_study(study=study)
    unit = protocol_for_design(design)
    context = unit.instructions_context(design=design, rtl=get_language_bidi()) if design is not None else {}
    criteria = study_criteria_for_judge(study)
    return render(
        request,
        unit.instructions_template,
        {
            "study": study,
            "criteria": criteria,
            "first_visit": assignment.instructions_seen_at is None,
            # As many as every item's "n of N" counts: checks drawn among the items included.
            "total_text": thousands(
                progress_among_checks(assignment=assignment, done=0)[1]
                if unit.checks_among_items
                else assignment.n_items
            ),
            "back_keys": unit.back_keys,
            # The slider keys are explained only where the design has a slider.
            "has_slider": any(c["continuous"] for c in criteria),
            **context,
        },
    )
