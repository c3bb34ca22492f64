"""Forms of the judging pages: the design, a judgment, an exclusion decision."""

from __future__ import annotations

import json

from django import forms

from annotation.judging.services.design import EDITABLE_WHEN_FROZEN, expected_kept
from metrics.core.controls import CONTROL_KINDS

from . import scales
from .enums import MAX_ITEM_SECONDS, EsaPrefill, JudgesMode
from .models import MAX_CONTROLS_PER_KIND, JudgingDesign
from .protocols.registry import protocol_choices

CONTROL_LABELS = {
    "identical": "The original itself",
    "random": "Another original of the study",
    "unigram": "A unigram-model sentence of the original's length",
}


def _expected_choices(scale: dict) -> list[tuple[str, str]]:
    values = scales.scale_values(scale)
    if values is None:
        return []
    labels = scales.scale_labels(scale)
    assert labels is not None  # a discrete scale has labels as it has values
    return [("", "unknown")] + [
        (str(v), f"{v} ({lbl})" if scale["type"] == "categorical" else str(v)) for v, lbl in zip(values, labels)
    ]


class DesignForm(forms.Form):
    """The whole design as flat fields; :meth:`changes` turns it into service input.

    The criteria's wording (name, help, point labels or slider anchors or category
    names) has one field each, for the design's current criteria; their structure
    (which criteria, which scales) is edited as JSON in ``criteria_json`` — the same
    shape the API takes. Once the design is frozen, every field but the expected
    scores and α is disabled (Django then ignores posted values for them).
    """

    criteria_json = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
        label="Criteria and scales (JSON)",
        help_text="1–8 criteria; change it to add, remove or re-scale criteria (see the protocols guide). "
        "Leave it as it is to edit only the wording below.",
    )
    judges_mode = forms.ChoiceField(choices=JudgesMode.choices, widget=forms.RadioSelect, label="Judges per item")
    judges_per_item = forms.IntegerField(
        min_value=1, max_value=100, label="k (judges per item)", help_text="Only used with 'exactly k judges per item'."
    )
    seed = forms.IntegerField(
        min_value=0,
        max_value=2**62,
        label="Seed",
        help_text="Controls and every judge's order are drawn from it; record it in your paper.",
    )
    qc_alpha = forms.FloatField(min_value=0.0001, max_value=0.5, label="QC significance level (α)")
    show_context = forms.BooleanField(
        required=False,
        label="Show each item's document context to judges",
        help_text="The previous and next sentences of the original's document "
        "(from the imported 'document' column), collapsible.",
    )
    protocol = forms.ChoiceField(choices=protocol_choices, widget=forms.RadioSelect, label="Protocol", required=False)
    comparison_per_criterion = forms.BooleanField(
        required=False,
        label="Comparison: ask which is better once per criterion",
        help_text="Otherwise judges answer one question: which paraphrase is better overall.",
    )
    pairs_per_original = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=1000,
        label="Comparison: system pairs per original",
        help_text="Empty: every pair of systems for every original. A number: that many per original, "
        "balanced over system pairs.",
    )
    esa_categories = forms.CharField(
        required=False,
        max_length=800,
        label="Error spans: categories",
        help_text="One per line (at most 12); a judge may give a span one of them, or none. Empty: severity only.",
        widget=forms.Textarea(attrs={"rows": 4}),
    )
    esa_prefill = forms.ChoiceField(choices=EsaPrefill.choices, required=False, label="Error spans: pre-filled spans")
    ranking_k = forms.IntegerField(
        required=False,
        min_value=2,
        max_value=6,
        label="Ranking: candidates at once",
        help_text="k candidates of one original are ranked together (3–6 is usual).",
    )
    ranking_scores = forms.BooleanField(required=False, label="Ranking: also ask a 0–100 score for each candidate")

    def __init__(self, data=None, files=None, *, design: JudgingDesign, **kwargs):
        initial = {
            "judges_mode": design.judges_mode,
            "judges_per_item": design.judges_per_item,
            "seed": design.seed,
            "qc_alpha": design.qc_alpha,
            "show_context": design.show_context,
            "protocol": design.protocol,
            "comparison_per_criterion": design.comparison_per_criterion,
            "pairs_per_original": design.pairs_per_original,
            "esa_categories": "\n".join(design.esa_categories),
            "esa_prefill": design.esa_prefill,
            "ranking_k": design.ranking_k,
            "ranking_scores": design.ranking_scores,
            "criteria_json": json.dumps(design.criteria, indent=1, ensure_ascii=False),
        }
        self.criteria = design.criteria
        for c in self.criteria:
            slug, scale = c["slug"], c["scale"]
            initial[f"{slug}_name"] = c["name"]
            initial[f"{slug}_help"] = c.get("help", "")
            for key, text in self._wording(scale):
                initial[f"{slug}_{key}"] = text
        for kind in CONTROL_KINDS:
            initial[f"controls_{kind}"] = int(design.control_counts.get(kind, 0))
            for c in self.criteria:
                v = (design.expected_scores.get(kind) or {}).get(c["slug"])
                initial[f"expected_{kind}_{c['slug']}"] = "" if v is None else str(v)
        # Only data and files positionally: a third positional argument would reach BaseForm's `initial`.
        super().__init__(data, files, initial=initial, **kwargs)
        self.design = design
        for c in self.criteria:
            slug, title = c["slug"], c["name"]
            self.fields[f"{slug}_name"] = forms.CharField(max_length=scales.MAX_NAME_CHARS, label=f"{title}: name")
            self.fields[f"{slug}_help"] = forms.CharField(
                max_length=scales.MAX_HELP_CHARS,
                required=False,
                label=f"{title}: help text",
                widget=forms.Textarea(attrs={"rows": 2}),
            )
            for key, _text in self._wording(c["scale"]):
                self.fields[f"{slug}_{key}"] = forms.CharField(
                    max_length=scales.MAX_LABEL_CHARS,
                    required=key.endswith("mid"),
                    label=f"{title}: {key.replace('_', ' ')}",
                )
        for kind in CONTROL_KINDS:
            self.fields[f"controls_{kind}"] = forms.IntegerField(
                min_value=0, max_value=MAX_CONTROLS_PER_KIND, label=f"{CONTROL_LABELS[kind]} ({kind}) per original"
            )
            for c in self.criteria:
                label = f"Expected {c['slug']} of {kind} controls"
                if scales.scale_unit(c["scale"]).continuous:
                    self.fields[f"expected_{kind}_{c['slug']}"] = forms.FloatField(
                        required=False, min_value=scales.SLIDER_MIN, max_value=scales.SLIDER_MAX, label=label
                    )
                else:
                    self.fields[f"expected_{kind}_{c['slug']}"] = forms.ChoiceField(
                        choices=_expected_choices(c["scale"]), required=False, label=label
                    )
        for name in self.fields:
            if name.startswith(("controls_", "expected_")) or "_label_" in name or "_anchor_" in name:
                # rendered in a table or a row of small boxes: name them for screen readers
                self.fields[name].widget.attrs["aria-label"] = self.fields[name].label
        if design.is_frozen:
            for name, field in self.fields.items():
                if not (name.startswith("expected_") or name in EDITABLE_WHEN_FROZEN):
                    field.disabled = True

    @staticmethod
    def _wording(scale: dict) -> list[tuple[str, str]]:
        """(field suffix, current text) of a scale's judge-facing words."""
        return scales.scale_wording(scale)

    # Grouped access for the template.
    def criterion_rows(self):
        return [
            {
                "slug": c["slug"],
                "title": c["name"],
                "scale": c["scale"],
                "name": self[f"{c['slug']}_name"],
                "help": self[f"{c['slug']}_help"],
                "labels": [self[f"{c['slug']}_{key}"] for key, _ in self._wording(c["scale"])],
            }
            for c in self.criteria
        ]

    def control_rows(self):
        return [
            {
                "kind": k,
                "label": CONTROL_LABELS[k],
                "count": self[f"controls_{k}"],
                "expected": [self[f"expected_{k}_{c['slug']}"] for c in self.criteria],
            }
            for k in CONTROL_KINDS
        ]

    def clean_criteria_json(self):
        text = self.cleaned_data.get("criteria_json") or ""
        if not text.strip():
            return None
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"not valid JSON: {exc}") from None
        value = scales.criteria_normalise(value)
        errors = scales.criteria_errors(value)
        if errors:
            raise forms.ValidationError(errors)
        return value

    def _criteria_from_wording(self) -> list[dict]:
        d = self.cleaned_data
        out = []
        for c in self.criteria:
            slug, scale = c["slug"], dict(c["scale"])
            words = [d.get(f"{slug}_{key}", text) for key, text in self._wording(scale)]
            scale = scales.scale_reworded(scale, [(w or "").strip() for w in words])
            out.append(
                {"slug": slug, "name": d[f"{slug}_name"].strip(), "help": d[f"{slug}_help"].strip(), "scale": scale}
            )
        return out

    def changes(self) -> dict:
        d = self.cleaned_data
        worded = self._criteria_from_wording()
        structure = d.get("criteria_json")
        # The JSON wins when it was changed; otherwise the wording fields describe the criteria.
        criteria = structure if structure is not None and structure != self.criteria else worded
        expected: dict[str, dict[str, int | float]] = {}
        for k in CONTROL_KINDS:
            expected[k] = {}
            for c in self.criteria:
                v = d.get(f"expected_{k}_{c['slug']}")
                if v not in (None, ""):
                    expected[k][c["slug"]] = scales.scale_unit(c["scale"]).value_stored(float(v))
        out = {
            "criteria": criteria,
            "judges_mode": d["judges_mode"],
            "judges_per_item": d["judges_per_item"],
            "control_counts": {k: d[f"controls_{k}"] for k in CONTROL_KINDS},
            "seed": d["seed"],
            "qc_alpha": d["qc_alpha"],
            "show_context": d.get("show_context", False),
            "protocol": d.get("protocol") or self.design.protocol,
            "comparison_per_criterion": d.get("comparison_per_criterion", False),
            "pairs_per_original": d.get("pairs_per_original"),
            "esa_categories": [line.strip() for line in (d.get("esa_categories") or "").splitlines() if line.strip()],
            "esa_prefill": d.get("esa_prefill") or self.design.esa_prefill,
            "ranking_k": d.get("ranking_k") or self.design.ranking_k,
            "ranking_scores": d.get("ranking_scores", False),
        }
        if criteria is worded:
            out["expected_scores"] = expected
        else:
            # New structure: keep what still fits (the service drops the rest).
            out["expected_scores"] = expected_kept(expected, criteria)
        return out


class JudgmentForm(forms.Form):
    """The judge page's POST. Values are optional and checked here only as text: the
    service checks each against its criterion's scale and names what is missing."""

    token = forms.CharField(max_length=64)
    serve = forms.CharField(max_length=400)
    key = forms.CharField(max_length=64)
    active_seconds = forms.FloatField(required=False, min_value=0, max_value=MAX_ITEM_SECONDS)

    def __init__(self, *args, criteria: list[dict], **kwargs):
        super().__init__(*args, **kwargs)
        self.criteria = criteria
        for c in criteria:
            self.fields[c["slug"]] = forms.CharField(max_length=40, required=False)

    def scores(self) -> dict[str, object]:
        """The posted values, read as numbers on their scales where they can be (the rest
        stays text, which the service refuses with its reason)."""
        out: dict[str, object] = {}
        for c in self.criteria:
            text = self.cleaned_data.get(c["slug"])
            if text in (None, ""):
                continue
            try:
                out[c["slug"]] = scales.value_clean(c["scale"], text, from_text=True)
            except ValueError:
                out[c["slug"]] = text
        return out


class ExclusionForm(forms.Form):
    excluded = forms.TypedChoiceField(choices=[("1", "exclude"), ("0", "include")], coerce=lambda v: v == "1")
    reason = forms.CharField(max_length=500, required=False)
