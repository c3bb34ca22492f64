"""Forms of the judging pages: the design, a judgment, an exclusion decision."""

from __future__ import annotations

from django import forms

from metrics.core.controls import CONTROL_KINDS

from .enums import CRITERIA, SCORE_MAX, SCORE_MIN, JudgesMode
from .models import MAX_CONTROLS_PER_KIND, JudgingDesign
from .services import EDITABLE_WHEN_FROZEN

POINTS = tuple(range(SCORE_MIN, SCORE_MAX + 1))
CONTROL_LABELS = {
    "identical": "The original itself",
    "random": "Another original of the study",
    "unigram": "A unigram-model sentence of the original's length",
}
CRITERION_TITLES = {"adequacy": "Adequacy", "fluency": "Fluency", "dissimilarity": "Lexical dissimilarity", "overall": "Overall"}


class DesignForm(forms.Form):
    """The whole design as flat fields; :meth:`changes` turns it into service input.

    Once the design is frozen, every field but the expected scores and α is
    disabled (Django then ignores posted values for them).
    """

    judges_mode = forms.ChoiceField(choices=JudgesMode.choices, widget=forms.RadioSelect, label="Judges per item")
    judges_per_item = forms.IntegerField(min_value=1, max_value=100, label="k (judges per item)",
                                         help_text="Only used with 'exactly k judges per item'.")
    seed = forms.IntegerField(min_value=0, max_value=2**62, label="Seed",
                              help_text="Controls and every judge's order are drawn from it; record it in your paper.")
    qc_alpha = forms.FloatField(min_value=0.0001, max_value=0.5, label="QC significance level (α)")

    def __init__(self, *args, design: JudgingDesign, **kwargs):
        initial = {
            "judges_mode": design.judges_mode, "judges_per_item": design.judges_per_item,
            "seed": design.seed, "qc_alpha": design.qc_alpha,
        }
        for c in design.criteria:
            initial[f"{c['slug']}_name"] = c["name"]
            initial[f"{c['slug']}_help"] = c.get("help", "")
            for p, label in zip(POINTS, c["labels"]):
                initial[f"{c['slug']}_label_{p}"] = label
        for kind in CONTROL_KINDS:
            initial[f"controls_{kind}"] = int(design.control_counts.get(kind, 0))
            for c in CRITERIA:
                initial[f"expected_{kind}_{c}"] = design.expected_scores[kind][c]
        super().__init__(*args, initial=initial, **kwargs)
        self.design = design
        for c in CRITERIA:
            title = CRITERION_TITLES[c]
            self.fields[f"{c}_name"] = forms.CharField(max_length=60, label=f"{title}: name")
            self.fields[f"{c}_help"] = forms.CharField(
                max_length=600, required=False, label=f"{title}: help text", widget=forms.Textarea(attrs={"rows": 2}))
            for p in POINTS:
                self.fields[f"{c}_label_{p}"] = forms.CharField(max_length=60, label=f"{title}: label of {p}")
        for kind in CONTROL_KINDS:
            self.fields[f"controls_{kind}"] = forms.IntegerField(
                min_value=0, max_value=MAX_CONTROLS_PER_KIND, label=f"{CONTROL_LABELS[kind]} ({kind}) per original")
            for c in CRITERIA:
                self.fields[f"expected_{kind}_{c}"] = forms.TypedChoiceField(
                    choices=[(p, p) for p in POINTS], coerce=int, label=f"Expected {c} of {kind} controls")
        for name in self.fields:
            if name.startswith(("controls_", "expected_")) or "_label_" in name:
                # rendered in a table or a row of small boxes: name them for screen readers
                self.fields[name].widget.attrs["aria-label"] = self.fields[name].label
        if design.is_frozen:
            for name, field in self.fields.items():
                if not (name.startswith("expected_") or name in EDITABLE_WHEN_FROZEN):
                    field.disabled = True

    # Grouped access for the template.
    def criterion_rows(self):
        return [{"slug": c, "title": CRITERION_TITLES[c], "name": self[f"{c}_name"], "help": self[f"{c}_help"],
                 "labels": [self[f"{c}_label_{p}"] for p in POINTS]} for c in CRITERIA]

    def control_rows(self):
        return [{"kind": k, "label": CONTROL_LABELS[k], "count": self[f"controls_{k}"],
                 "expected": [self[f"expected_{k}_{c}"] for c in CRITERIA]} for k in CONTROL_KINDS]

    def changes(self) -> dict:
        d = self.cleaned_data
        return {
            "criteria": [{"slug": c, "name": d[f"{c}_name"].strip(), "help": d[f"{c}_help"].strip(),
                          "labels": [d[f"{c}_label_{p}"].strip() for p in POINTS]} for c in CRITERIA],
            "judges_mode": d["judges_mode"],
            "judges_per_item": d["judges_per_item"],
            "control_counts": {k: d[f"controls_{k}"] for k in CONTROL_KINDS},
            "expected_scores": {k: {c: d[f"expected_{k}_{c}"] for c in CRITERIA} for k in CONTROL_KINDS},
            "seed": d["seed"],
            "qc_alpha": d["qc_alpha"],
        }


class JudgmentForm(forms.Form):
    """The judge page's POST. Scores are optional here: the service names what is missing."""

    token = forms.CharField(max_length=64)
    serve = forms.CharField(max_length=400)
    key = forms.CharField(max_length=64)
    active_seconds = forms.FloatField(required=False, min_value=0)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for c in CRITERIA:
            self.fields[c] = forms.TypedChoiceField(choices=[(p, p) for p in POINTS], coerce=int, required=False)

    def scores(self) -> dict[str, int]:
        return {c: self.cleaned_data[c] for c in CRITERIA if self.cleaned_data.get(c) not in (None, "")}


class ExclusionForm(forms.Form):
    excluded = forms.TypedChoiceField(choices=[("1", "exclude"), ("0", "include")], coerce=lambda v: v == "1")
    reason = forms.CharField(max_length=500, required=False)
