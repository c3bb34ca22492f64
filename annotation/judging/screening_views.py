"""Pages of training and screening: the judge's training, feedback, attention check and
"screened out" pages, and the researcher's training items and screening settings
(a section of the judging design page).

The judge's pages show a training item's texts and, after the judge answered, how
each of their values compares with the reference (within range, higher, lower: never
the reference value) and the explanation; an attention check shows one criterion and the
value to choose. Nothing here refers to the study's candidates, systems or controls.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import get_language_bidi
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.judging.selectors.design import study_criteria
from annotation.web import end_code_context, participant_page, researcher_study_required
from metrics.core.tabular import TabularError

from . import scales, screening, training
from .enums import AttentionPolicy
from .errors import JudgingError
from .models import JudgingDesign, ScreeningSettings
from .protocols.registry import protocol_for_study
from .web import judge_assignment, judged_study_or_404, study_criteria_for_judge

# --- the judge's pages ------------------------------------------------------------------


@participant_page
@login_required
@require_http_methods(["GET", "POST"])
def training_page(request, study_id: int):
    """The next training item (GET) or an answer to it (POST, then the feedback page)."""
    study, assignment = judge_assignment(request, study_id)
    if isinstance(assignment, HttpResponse):  # not open to this judge now: that page
        return assignment
    unit = protocol_for_study(study=study)
    state = training.training_state(assignment=assignment)
    if state.passed or state.next_item is None:
        return redirect(unit.judge_page, study_id=study.pk)
    error, field_errors, posted = None, {}, {}
    if request.method == "POST":
        posted = {
            k: request.POST.get(k, "")
            for k in request.POST
            if k not in ("csrfmiddlewaretoken", "token", "active_seconds")
        }
        try:
            training.training_answer_submit(
                assignment=assignment, token=request.POST.get("token", ""), scores=posted, from_text=True
            )
        except JudgingError as exc:
            error, field_errors = exc.message, exc.field_errors
        else:
            return redirect("judging:training_feedback", study_id=study.pk)
    item = state.next_item
    # Every protocol but the absolute one has a design; without one the page rates on the criteria.
    design = JudgingDesign.objects.filter(study=study).first()
    shown = (
        None
        if design is None
        else unit.training_page_context(
            design=design, item=item, posted=posted, field_errors=field_errors, rtl=get_language_bidi()
        )
    )
    if shown is None:  # the design's criteria, with the rating page's scale inputs
        criteria = study_criteria_for_judge(study)
        for c in criteria:
            value = posted.get(c["slug"])
            try:
                c["checked"] = None if value in (None, "") else (float(value) if c["continuous"] else int(value))
            except ValueError:
                c["checked"] = None
            c["errors"] = field_errors.get(c["slug"], [])
        shown = {"criteria": criteria}
    number = 1 if state.attempt_finished else state.answered + 1
    return render(
        request,
        unit.training_template,
        {
            **shown,
            "study": study,
            "item": item,
            "number": number,
            "n_items": state.n_items,
            "attempt": state.attempt + 1 if state.attempt_finished or state.attempt == 0 else state.attempt,
            "attempts_allowed": state.attempts_allowed,
            "error": error,
        },
        status=400 if error else 200,
    )


@participant_page
@login_required
@require_GET
def training_feedback(request, study_id: int):
    """After each training answer: the judge's values, how each compares with the reference, the explanation."""
    study, assignment = judge_assignment(request, study_id, screened_out_page=False)
    if isinstance(assignment, HttpResponse):  # not open to this judge now: that page
        return assignment
    state = training.training_state(assignment=assignment)
    answer = assignment.training_answers.select_related("item").order_by("-created_at", "-id").first()
    if answer is None:
        return redirect("judging:training", study_id=study.pk)
    verdicts = training.training_answer_feedback(answer=answer)
    unit = protocol_for_study(study=study)
    design = JudgingDesign.objects.filter(study=study).first()
    rows = (
        None if design is None else unit.training_feedback_rows(design=design, values=answer.values, verdicts=verdicts)
    ) or []
    for c in [] if rows else study_criteria_for_judge(study):
        labels = {p["value"]: p["label"] for p in c["points"]}

        def shown(v, labels=labels):
            return "—" if v is None else (f"{v} ({labels[v]})" if v in labels else str(v))

        rows.append(
            {"name": c["name"], "yours": shown(answer.values.get(c["slug"])), "verdict": verdicts.get(c["slug"], "")}
        )
    return render(
        request,
        "judging/training_feedback.html",
        {
            "study": study,
            "answer": answer,
            "rows": rows,
            "state": state,
            "texts": unit.training_item_for_judge(item=answer.item),
            "judge_page": unit.judge_page,
            "feedback_template": unit.training_feedback_template,
            **unit.training_feedback_context(design=design, item=answer.item, values=answer.values),
            "screened_out": assignment.screened_out_at is not None,
        },
    )


@participant_page
@login_required
@require_GET
def screened_out(request, study_id: int):
    study = judged_study_or_404(request, study_id)
    assignment = study.judging_assignments.filter(judge=request.user).first()
    if assignment is None or assignment.screened_out_at is None:
        return redirect("judging:rate", study_id=study.pk)
    return render(
        request,
        "judging/screened_out.html",
        {
            "study": study,
            "assignment": assignment,
            "end": end_code_context(user=request.user, study=study, outcome="screened_out"),
        },
    )


# --- the researcher's side -------------------------------------------------------------------


class ScreeningForm(forms.ModelForm):
    training_criteria = forms.CharField(
        label="Training: criteria checked",
        required=False,
        help_text="Criterion slugs the pass rule checks, separated by commas (empty: all).",
    )

    class Meta:
        model = ScreeningSettings
        fields = [
            "training_criteria",
            "training_tolerance",
            "training_required",
            "training_retries",
            "training_items_per_attempt",
            "attention_count",
            "attention_policy",
            "attention_max_failures",
            "qc_auto",
            "qc_auto_pvalue",
            "qc_auto_min_controls",
        ]
        # Written for people: Django's defaults read "Qc auto pvalue" (issue 28).
        labels = {
            "training_tolerance": "Training: tolerance (± points)",
            "training_required": "Training: items to get right",
            "training_retries": "Training: retries",
            "attention_count": "Attention checks per judge",
            "attention_policy": "When a judge fails an attention check",
            "attention_max_failures": "Attention: failures that screen out",
            "qc_auto": "QC: screen out judges automatically",
            "qc_auto_pvalue": "QC: p-value threshold",
            "qc_auto_min_controls": "QC: controls rated before the check",
        }

    def __init__(
        self, *args, criteria: list[dict] | None = None, tolerances: bool = True, questions: bool = True, **kwargs
    ):
        super().__init__(*args, **kwargs)
        if not questions:  # a protocol with one question: nothing to choose
            del self.fields["training_criteria"]
        if not tolerances:  # answers that are not values on a scale (A, tie, B): right or not, no tolerance
            del self.fields["training_tolerance"]
            if questions:
                self.fields["training_criteria"].label = "Training: questions checked"
                self.fields[
                    "training_criteria"
                ].help_text = "Question slugs the pass rule checks, separated by commas (empty: all)."
        self.fields["training_items_per_attempt"].required = False  # empty: 0, every item
        if not self.is_bound and self.instance and questions:
            self.initial["training_criteria"] = ", ".join(self.instance.training_criteria or [])
        if tolerances:
            self.fields["training_tolerance"].label = "Training tolerance on point scales (± points)"
        # One tolerance per criterion, on its own scale (empty: the scale's default).
        self.criteria = criteria or []
        saved = (self.instance.training_tolerances if self.instance else None) or {}
        for c in self.criteria:
            unit = scales.scale_unit(c["scale"])
            if unit.type == "categorical":
                continue  # named categories: always exact
            default = (
                self.instance.training_tolerance if unit.type == "points" and self.instance else unit.default_tolerance
            )
            self.fields[f"tolerance_{c['slug']}"] = forms.FloatField(
                label=f"Tolerance for {c['name']} ({unit.range_text()})",
                required=False,
                min_value=0,
                max_value=unit.high - unit.low,
                initial=saved.get(c["slug"]),
                help_text=f"± on its scale; empty: {unit.tolerance_text(default)}.",
            )

    def clean_training_items_per_attempt(self):
        return self.cleaned_data["training_items_per_attempt"] or 0

    def clean_training_criteria(self):
        return [s.strip() for s in self.cleaned_data["training_criteria"].split(",") if s.strip()]

    def changes(self) -> dict:
        out = {f: self.cleaned_data[f] for f in self.Meta.fields if f in self.fields}
        if self.criteria:
            out["training_tolerances"] = {
                c["slug"]: self.cleaned_data[f"tolerance_{c['slug']}"]
                for c in self.criteria
                if self.cleaned_data.get(f"tolerance_{c['slug']}") is not None
            }
        return out


def screening_context(study) -> dict:
    """What the design page's "Training and screening" section renders."""
    settings = screening.settings_for_study(study=study) or ScreeningSettings(study=study)
    criteria = study_criteria(study=study)
    items = training.training_items(study=study)
    unit = protocol_for_study(study=study)
    if not unit.training_tolerances:  # answers are not values on a scale: no tolerance per criterion
        criteria = []
    design = JudgingDesign.objects.filter(study=study).first()
    return {
        "screening_form": ScreeningForm(
            instance=settings,
            criteria=criteria,
            tolerances=unit.training_tolerances,
            questions=unit.training_questions_checked,
        ),
        "training_items": items,
        "training_questions": unit.training_questions(design=design) if design is not None else [],
        "screening_settings": settings,
        "attention_policies": AttentionPolicy,
        "training_pool_warning": training.training_pool_warning(
            n_items=len(items), per_attempt=settings.training_items_per_attempt
        ),
    }


def _back(study):
    return redirect(f"/studies/{study.pk}/judging/design/#training")


@researcher_study_required
@require_POST
def screening_settings(request, study):
    settings = screening.settings_for_study(study=study) or ScreeningSettings(study=study)
    unit = protocol_for_study(study=study)
    tolerances = unit.training_tolerances
    form = ScreeningForm(
        request.POST,
        instance=settings,
        criteria=study_criteria(study=study) if tolerances else [],
        tolerances=tolerances,
        questions=unit.training_questions_checked,
    )
    if not form.is_valid():
        messages.error(
            request,
            "Screening settings not saved: "
            + "; ".join(f"{k}: {' '.join(str(e) for e in v)}" for k, v in form.errors.items()),
        )
        return _back(study)
    try:
        screening.screening_settings_update(study=study, changes=form.changes())
    except JudgingError as exc:
        messages.error(
            request, exc.message + " " + "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.field_errors.items())
        )
    else:
        messages.success(request, "Screening settings saved.")
    return _back(study)


@researcher_study_required
@require_POST
def training_item_add(request, study):
    row = {k: v for k, v in request.POST.items() if k != "csrfmiddlewaretoken" and v.strip()}
    try:
        training.training_item_add(study=study, row=row, from_text=True)
    except JudgingError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "Training item added.")
    return _back(study)


@researcher_study_required
@require_POST
def training_item_delete(request, study, token: str):
    try:
        training.training_item_delete(study=study, token=token)
    except JudgingError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "Training item deleted.")
    return _back(study)


@researcher_study_required
@require_POST
def training_import(request, study):
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a training items file to import.")
        return _back(study)
    try:
        n = training.training_items_import(study=study, data=upload.read(), filename=upload.name)
    except TabularError as exc:
        messages.error(request, "Nothing was imported:\n" + exc.describe(limit=20))
    except JudgingError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"{n} training items imported from {upload.name} (they replace the earlier ones).")
    return _back(study)
