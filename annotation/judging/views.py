# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
"""Judging pages: the judge's rating pages and the researcher's design, progress and QC.

Judge pages render only :class:`~annotation.judging.selectors.JudgeItem` values and
the design's criteria texts: no system, control kind, expected score or database
id of a candidate, original or system reaches the judge's browser.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.enums import JobStatus, Role, StudyStatus
from annotation.importing import StudyImportError
from annotation.models import Candidate, Original, Study
from annotation.selectors import ROLE_CONFLICT_HOLD_MESSAGE, user_role_conflict
from annotation.views import (member_language_activate, participant_page, researcher_study_required, study_context,
                              study_language_activate)

from . import screening, screening_views, selectors, services
from . import scales
from .enums import JudgmentSource
from .errors import ItemNotFound, JudgingError
from .exports import csv_lines
from .forms import DesignForm, ExclusionForm, JudgmentForm
from .models import OpenJob
from .tokens import idempotency_key_new


def _n(value: int) -> str:
    return f"{value:,}"


# --- the judge's pages ------------------------------------------------------------------

def _judge_study(request, study_id: int) -> Study:
    """The study, if the user judges it; 404 for everyone else (no hint that it exists)."""
    study = Study.objects.filter(pk=study_id, memberships__user=request.user, memberships__role=Role.JUDGE).first()
    if study is None:
        raise Http404("You are not a judge of this study.")
    if user_role_conflict(study=study, user=request.user):
        raise PermissionDenied(ROLE_CONFLICT_HOLD_MESSAGE)
    study_language_activate(study)  # the rest of the (participant_page) view speaks the study's language
    return study


def _point_keys(values: list[int]) -> list[str | None]:
    """Keyboard keys of a discrete scale's points: the digit of the value itself when every
    value is 0–9 (so 0–2 is typed 0, 1, 2 and 1–5 is typed 1–5), else 1…k for k ≤ 9, else none."""
    if all(0 <= v <= 9 for v in values):
        return [str(v) for v in values]
    if len(values) <= 9:
        return [str(i) for i in range(1, len(values) + 1)]
    return [None] * len(values)


def criteria_for_judge(criteria: list[dict]) -> list[dict]:
    """The design's criteria as the judge's page renders them: texts, scale type, points
    (value, label, key) or slider anchors. Nothing else of the design."""
    out = []
    for c in criteria:
        scale = c["scale"]
        row = {"slug": c["slug"], "name": c["name"], "help": c.get("help", ""), "type": scale["type"]}
        if scale["type"] == "slider":
            anchors = scale.get("anchors", {})
            row |= {"min": scales.SLIDER_MIN, "max": scales.SLIDER_MAX, "low": anchors.get("low", ""),
                    "mid": anchors.get("mid", ""), "high": anchors.get("high", ""), "points": []}
        else:
            values, labels = scales.scale_values(scale), scales.scale_labels(scale)
            keys = (_point_keys(values) if scale["type"] == "points"
                    else [str(i + 1) if len(values) <= 9 else None for i in range(len(values))])
            row["points"] = [{"value": v, "label": lbl, "key": k} for v, lbl, k in zip(values, labels, keys)]
        out.append(row)
    return out


def _criteria_for_judge(study: Study) -> list[dict]:
    return criteria_for_judge(selectors.study_criteria(study=study))


@login_required
@participant_page
def judge_home(request):
    member_language_activate(request, Role.JUDGE)
    rows = selectors.studies_for_judge(judge=request.user)
    for row in rows:
        if row["is_open"] and row["assignment"] is None:
            # Added after the study opened: build their assignment now.
            services.assignment_ensure_for_judge(study=row["study"], judge=request.user)
    if any(r["is_open"] and r["assignment"] is None for r in rows):
        rows = selectors.studies_for_judge(judge=request.user)
    return render(request, "judging/home.html", {"rows": [
        dict(r, done_text=_n(r["done"]), total_text=_n(r["total"])) for r in rows]})


def _assignment_or_page(request, study: Study):
    """(assignment, None) when the judge may rate now, else (None, response)."""
    if study.status != StudyStatus.OPEN:
        return None, render(request, "judging/not_open.html", {"study": study})
    assignment = services.assignment_ensure_for_judge(study=study, judge=request.user)
    if assignment is None:
        return None, render(request, "judging/not_open.html", {"study": study})
    return assignment, None


def _render_item(request, study, item, *, error=None, field_errors=None, posted=None, status=200):
    scores = posted if posted is not None else (item.scores or {})
    criteria = _criteria_for_judge(study)
    for c in criteria:
        value = scores.get(c["slug"])
        if isinstance(value, str):  # posted back after an error: compare as the stored type
            try:
                value = float(value) if c["type"] == "slider" else int(value)
            except ValueError:
                value = None
        c["checked"] = value
        c["errors"] = (field_errors or {}).get(c["slug"], [])
    return render(request, "judging/rate.html", {
        "study": study,
        "item": item,
        "criteria": criteria,
        "key": idempotency_key_new(),
        "position_text": _n(item.position),
        "total_text": _n(item.total),
        "done_text": _n(item.done),
        "error": error,
    }, status=status)


@login_required
@require_GET
@participant_page
def rate(request, study_id: int):
    """The judge's current item: the first one not yet rated (the resume point)."""
    study = _judge_study(request, study_id)
    assignment, page = _assignment_or_page(request, study)
    if page is not None:
        return page
    if selectors.study_is_comparison(study=study):
        return redirect("judging:compare", study_id=study.pk)  # the side-by-side protocol's own page
    if assignment.instructions_seen_at is None:
        return redirect("judging:instructions", study_id=study.pk)
    item = selectors.item_next_for_judge(assignment=assignment)
    gate = screening_views.gate_page(request, study, assignment, done=item.done if item else assignment.n_items)
    if gate is not None:  # screened out, training first, or an attention check
        return gate
    if item is None:
        return redirect("judging:finished", study_id=study.pk)
    return _render_item(request, study, item)


@login_required
@require_GET
@participant_page
def revise(request, study_id: int, token: str):
    """One earlier item of the judge's own assignment, to change its scores."""
    study = _judge_study(request, study_id)
    assignment, page = _assignment_or_page(request, study)
    if page is not None:
        return page
    try:
        item = selectors.item_for_judge(study=study, judge=request.user, token=token)
    except ItemNotFound as exc:
        raise Http404(exc.message) from None
    return _render_item(request, study, item)


@login_required
@require_POST
@participant_page
def submit(request, study_id: int):
    """The rating form's POST: the same service as the API, then back to the resume point."""
    study = _judge_study(request, study_id)
    form = JudgmentForm(request.POST, criteria=selectors.study_criteria(study=study))
    token = request.POST.get("token", "")
    if not form.is_valid():
        error = _("Give every criterion a value on its scale.")
        field_errors, posted = form.errors, {}
    else:
        try:
            result = services.judgment_submit(
                study=study, judge=request.user, token=form.cleaned_data["token"], key=form.cleaned_data["key"],
                scores=form.scores(), serve_stamp=form.cleaned_data["serve"],
                active_seconds=form.cleaned_data.get("active_seconds"), source=JudgmentSource.PAGE)
        except ItemNotFound as exc:
            raise Http404(exc.message) from None
        except JudgingError as exc:
            if study.status != StudyStatus.OPEN:
                return render(request, "judging/not_open.html", {"study": study}, status=exc.status_code)
            error, field_errors, posted = exc.message, exc.field_errors, form.scores()
        else:
            screening.after_judgment(assignment=result.judgment.item.assignment)
            return redirect("judging:rate", study_id=study.pk)
    try:
        item = selectors.item_for_judge(study=study, judge=request.user, token=token)
    except ItemNotFound as exc:
        raise Http404(exc.message) from None
    return _render_item(request, study, item, error=error, field_errors=field_errors, posted=posted, status=400)


@login_required
@require_http_methods(["GET", "POST"])
@participant_page
def instructions(request, study_id: int):
    """Shown before the first item, and whenever the judge asks (the "?" key)."""
    study = _judge_study(request, study_id)
    assignment, page = _assignment_or_page(request, study)
    if page is not None:
        return page
    if request.method == "POST":
        services.instructions_mark_seen(assignment=assignment)
        return redirect("judging:rate", study_id=study.pk)
    design = selectors.design_for_study(study=study)
    if design is not None and design.protocol == "comparison":
        from .comparison import questions  # the side-by-side protocol's own instructions

        return render(request, "judging/compare_instructions.html", {
            "study": study, "questions": questions(design), "first_visit": assignment.instructions_seen_at is None,
            "total_text": _n(assignment.n_items)})
    return render(request, "judging/instructions.html", {
        "study": study, "criteria": _criteria_for_judge(study), "first_visit": assignment.instructions_seen_at is None,
        "total_text": _n(assignment.n_items),
    })


@login_required
@require_GET
@participant_page
def finished(request, study_id: int):
    study = _judge_study(request, study_id)
    assignment, page = _assignment_or_page(request, study)
    if page is not None:
        return page
    if assignment.screened_out_at is not None:
        return redirect("judging:screened_out", study_id=study.pk)
    if selectors.item_next_for_judge(assignment=assignment) is not None:
        return redirect("judging:rate", study_id=study.pk)
    last = selectors.item_previous_for_judge(study=study, judge=request.user)
    from annotation.participation.views import end_code_context  # join-link participants: their code

    return render(request, "judging/finished.html", {
        "study": study, "total_text": _n(assignment.n_items), "last": last,
        "end": end_code_context(user=request.user, study=study)})


# --- the researcher's pages ------------------------------------------------------------

@researcher_study_required
@require_http_methods(["GET", "POST"])
def design(request, study):
    design = services.design_get_or_create(study=study)
    form = DesignForm(request.POST or None, design=design)
    if request.method == "POST" and form.is_valid():
        try:
            services.design_update(study=study, changes=form.changes())
        except JudgingError as exc:
            form.add_error(None, exc.message)
            for field, errs in exc.field_errors.items():
                for e in errs:
                    form.add_error(None, f"{field}: {e}")
        else:
            messages.success(request, "Design saved.")
            return redirect("judging:design", study_id=study.pk)
    n_originals = Original.objects.filter(study=study).count()
    n_candidates = Candidate.objects.filter(original__study=study).count()
    n_judges = User.objects.filter(study_memberships__study=study, study_memberships__role=Role.JUDGE).distinct().count()
    n_controls = 0 if design.is_frozen else n_originals * sum(int(v) for v in design.control_counts.values())
    open_job = OpenJob.objects.filter(study=study).first()  # the latest
    if open_job is not None and not open_job.is_finished:
        open_state = "running"
    elif open_job is not None and open_job.status == JobStatus.FAILED and not design.is_frozen:
        open_state = "failed"
    elif open_job is not None and open_job.status == JobStatus.SUCCEEDED and design.is_frozen:
        open_state = "succeeded"
    else:
        open_state = None
    return render(request, "judging/design.html", study_context(
        study, design=design, form=form, n_originals=n_originals, n_candidates=n_candidates, n_judges=n_judges,
        n_items=n_candidates + n_controls, n_controls=n_controls,
        has_judgments=selectors.study_has_judgments(study=study),
        open_job=open_job, open_state=open_state,
        open_summary=open_summary_text(open_job.summary) if open_state == "succeeded" else "",
        **screening_views.screening_context(study),
    ))


def _post_action(request, study, action, success: str, target: str = "judging:design"):
    try:
        result = action()
    except JudgingError as exc:
        messages.error(request, exc.message)
        return redirect(target, study_id=study.pk)
    messages.success(request, success.format(result=result))
    return redirect(target, study_id=study.pk)


def open_summary_text(summary: dict) -> str:
    return (f"Judging is open: {summary['controls_created']:,} controls built, "
            f"{summary['judges']} judge(s) assigned {summary['assignment_items']:,} items in all.")


@researcher_study_required
@require_POST
def open_study(request, study):
    """Open judging: small studies at once (to the progress page), large ones in a worker (back to the design
    page, which shows the job's progress and then its outcome)."""
    try:
        job = services.study_judging_open_start(study=study, user=request.user)
    except JudgingError as exc:
        messages.error(request, exc.message)
        return redirect("judging:design", study_id=study.pk)
    if job.status == JobStatus.SUCCEEDED:
        messages.success(request, open_summary_text(job.summary))
        return redirect("judging:progress", study_id=study.pk)
    messages.info(request, "Judging is being opened in the background. Judges can start once every judge's list "
                           "is built; this page shows the progress.")
    return redirect("judging:design", study_id=study.pk)


def open_job_payload(job: OpenJob) -> dict:
    return {"id": job.pk, "status": job.status, "phase": job.phase, "percent": job.percent,
            "done": job.progress_done, "total": job.progress_total, "error": job.error,
            "summary": job.summary if job.status == JobStatus.SUCCEEDED else None}


@researcher_study_required
@require_GET
def open_job_status(request, study, open_job_id: int):
    job = get_object_or_404(OpenJob, pk=open_job_id, study=study)
    return JsonResponse(open_job_payload(job))


@researcher_study_required
@require_POST
def close_study(request, study):
    return _post_action(request, study, lambda: services.study_judging_close(study=study),
                        "Judging is closed; no more judgments are accepted.", "judging:progress")


@researcher_study_required
@require_POST
def reopen_study(request, study):
    return _post_action(request, study, lambda: services.study_judging_reopen(study=study),
                        "Judging is open again.", "judging:progress")


@researcher_study_required
@require_POST
def reset_study(request, study):
    return _post_action(request, study, lambda: services.study_judging_reset(study=study),
                        "Judging was reset: assignments and controls are deleted and the design can be edited again.")


@researcher_study_required
@require_POST
def assign_late(request, study):
    return _post_action(request, study, lambda: services.assignments_ensure_all(study=study),
                        "{result} new judge assignment(s) built.", "judging:progress")


@researcher_study_required
@require_GET
def progress(request, study):
    return render(request, "judging/progress.html", study_context(
        study, progress=selectors.study_progress(study=study), design=selectors.design_for_study(study=study)))


@researcher_study_required
@require_GET
def progress_json(request, study):
    return JsonResponse(selectors.study_progress(study=study), encoder=DjangoJSONEncoder)


#: Column headings of the three PEM control tests (``metrics.core.stats.qc.DEFAULT_QC_TESTS``).
QC_TEST_LABELS = {
    "adequacy_of_random_and_unigram": "Adequacy of random & unigram controls",
    "fluency_of_unigram": "Fluency of unigram controls",
    "dissimilarity_of_identical": "Dissimilarity of identical controls",
}


def _qc_display(row: dict, criteria: list[str]) -> dict:
    """Format one judge's QC result for the table (numbers as text, flags as a list)."""
    qc = row["qc"]
    out = {"judge": row["judge"], "excluded": row["excluded"], "screened_out": row.get("screened_out")}
    if qc is None:
        return out | {"verdict": "none", "flags": [], "n_items": 0, "n_controls": 0, "mad": ["—"] * len(criteria),
                      "tests": [{"label": label, "passed": None, "p": "—"} for label in QC_TEST_LABELS.values()],
                      "median": "—", "straight": "—", "straight_flagged": False}
    tested = any(t.passed is not None for t in qc.tests)
    top = max(qc.straightlining.items(), key=lambda kv: kv[1], default=None)
    return out | {
        # "pass" only when a test could run: no flags on a handful of items means little
        "verdict": "fail" if qc.flags else ("pass" if tested else "none"),
        "flags": list(qc.flags),
        "n_items": qc.n_items,
        "n_controls": qc.n_controls,
        "mad": [f"{qc.control_mad[c]:.2f}" if c in qc.control_mad else "—" for c in criteria],
        "tests": [{"label": QC_TEST_LABELS.get(t.name, t.name), "passed": t.passed,
                   "p": "—" if t.pvalue is None else f"{t.pvalue:.3g}"} for t in qc.tests],
        "median": "—" if qc.median_seconds is None else f"{qc.median_seconds:.1f}",
        "straight": f"{top[1]:.0%} ({top[0]})" if top else "—",
        "straight_flagged": bool(top) and top[1] >= selectors.STRAIGHTLINE_THRESHOLD
        and qc.n_items >= selectors.STRAIGHTLINE_MIN_SCORES,
    }


@researcher_study_required
@require_GET
def qc(request, study):
    design = selectors.design_for_study(study=study)
    criteria = selectors.study_criteria_slugs(study=study)
    expected = selectors.study_control_expected(study=study)
    # Criteria with no expected value for any control kind: their controls are judged
    # but cannot be checked (the QC page says so).
    unchecked = [c for c in criteria if not any(c in v for v in expected.values())]
    rows = [_qc_display(r, criteria) for r in selectors.judge_qc(study=study)]
    return render(request, "judging/qc.html", study_context(
        study, rows=rows, alpha=design.qc_alpha if design else 0.05, criteria=criteria, unchecked=unchecked,
        test_labels=list(QC_TEST_LABELS.values()),
        history=selectors.judge_exclusion_history(study=study),
        fingerprint=selectors.judgments_fingerprint(study=study),
        comparison_qc=_comparison_qc(study, design)))


def _comparison_qc(study, design):
    """Side-by-side studies: each judge's answers on control pairs (None for absolute studies)."""
    if design is None or design.protocol != "comparison":
        return None
    from .comparison import comparison_qc

    return comparison_qc(study=study)


@researcher_study_required
@require_POST
def exclusion(request, study, username: str):
    judge = get_object_or_404(User, username=username)
    form = ExclusionForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose to exclude or include the judge.")
        return redirect("judging:qc", study_id=study.pk)
    try:
        row = services.judge_exclusion_set(study=study, judge=judge, excluded=form.cleaned_data["excluded"],
                                           decided_by=request.user, reason=form.cleaned_data["reason"])
    except JudgingError as exc:
        messages.error(request, exc.message)
    else:
        if row is None:
            messages.info(request, f"{judge.username} was already {'excluded' if form.cleaned_data['excluded'] else 'included'}.")
        else:
            messages.success(request, f"{judge.username} is now {'excluded from' if row.excluded else 'included in'} "
                                      "every statistic of this study.")
    return redirect(reverse("judging:qc", kwargs={"study_id": study.pk}))


def csv_response(rows, filename: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(csv_lines(rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def export_filename(study: Study, kind: str) -> str:
    return f"{slugify(study.name) or 'study'}-judgments-{kind}.csv"


@researcher_study_required
@require_GET
def export_tidy(request, study):
    return csv_response(selectors.export_tidy_rows(study=study), export_filename(study, "tidy"))


@researcher_study_required
@require_GET
def export_wide(request, study):
    return csv_response(selectors.export_wide_rows(study=study), export_filename(study, "wide"))


@researcher_study_required
@require_POST
def import_judgments(request, study):
    """The judging design page's upload of judgments collected elsewhere (all or nothing)."""
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a judgments file to import.")
        return redirect("judging:design", study_id=study.pk)
    try:
        s = services.judgments_import_file(study=study, data=upload.read(), filename=upload.name)
    except StudyImportError as exc:
        messages.error(request, "Nothing was imported:\n" + exc.describe(limit=20))
        return redirect("judging:design", study_id=study.pk)
    messages.success(request, f"Imported {s.judgments:,} judgments ({s.revisions:,} revisions) by {s.judges} judges "
                              f"from {upload.name}; {s.judges_created} imported participants created.")
    return redirect("judging:design", study_id=study.pk)
