"""The report settings form (what ``services.report_settings_clean`` accepts, as fields).

Built from the study's own design: the target criterion is one of its criteria, the
Table 2 subset has one field per ordered criterion with that criterion's range, "raw
scores" names each criterion's scale, and only the settings the study's protocol reads
are offered (:func:`~metrics.reports.services.report_settings.report_settings_offered`).
"""

from __future__ import annotations

from typing import Any

from django import forms

from annotation.judging.defaults import default_criteria
from annotation.judging.scales import scale_unit
from metrics.reports.services.report_settings import MIN_SHARED_MAX, MIN_SHARED_MIN, N_BOOT_MAX, N_BOOT_MIN

from .services.report_settings import (
    DEFAULT_SETTINGS,
    report_settings_defaults,
    report_settings_offered,
    subset_criteria,
)

SUBSET_PREFIX = "subset_"


class ReportSettingsForm(forms.Form):
    criterion = forms.ChoiceField(
        label="Target criterion", help_text="Tables 1 and 3, the ranking and the leaderboard use this criterion."
    )
    normalize = forms.ChoiceField(label="Human scores", required=False, initial="")
    include_controls_in_mean = forms.BooleanField(
        label="Controls in the human reference",
        required=False,
        initial=True,
        help_text="Controls enter Table 2 at their expected scores (PEM §5.2). Table 3 and the leaderboard always "
        "show both: genuine items first, controls in the reference as a second column.",
    )
    include_metrics = forms.BooleanField(label="Correlate the study's metric runs", required=False, initial=True)
    confidence_level = forms.FloatField(label="Confidence level", min_value=0.5, max_value=0.999, initial=0.95)
    significance_level = forms.FloatField(label="Significance level", min_value=0.0001, max_value=0.5, initial=0.05)
    seed = forms.IntegerField(label="Seed (bootstrap, jitter)", min_value=0, max_value=2**32 - 1, initial=0)
    n_boot = forms.IntegerField(
        label="Bootstrap resamples",
        required=False,
        min_value=N_BOOT_MIN,
        max_value=N_BOOT_MAX,
        help_text="Empty: 1,000 (500 above 50,000 items).",
    )
    min_shared = forms.IntegerField(
        label="Minimum shared items",
        required=False,
        min_value=MIN_SHARED_MIN,
        max_value=MIN_SHARED_MAX,
        initial=30,
        help_text="Two judges enter the inter-judge summary only when they share this many items; an ICC needs "
        "this many items rated by every judge.",
    )

    def __init__(self, *args, criteria: list[dict] | None = None, protocol: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.criteria = criteria or default_criteria()
        self.offered = report_settings_offered(protocol)
        criterion, normalize = self.fields["criterion"], self.fields["normalize"]
        assert isinstance(criterion, forms.ChoiceField) and isinstance(normalize, forms.ChoiceField)
        criterion.choices = [(c["slug"], c["name"]) for c in self.criteria]
        self.fields["criterion"].initial = report_settings_defaults(self.criteria)["criterion"]
        ranges = ", ".join(f"{c['name']} {scale_unit(c['scale']).range_text()}" for c in self.criteria)
        normalize.choices = [("", "raw scores, each on its own scale"), ("z", "per-judge z-scores")]
        self.fields[
            "normalize"
        ].help_text = f"Raw: {ranges}. Per-judge z-scores even out lenient and harsh judges (WMT's DA normalisation)."
        # Table 2's subset: one minimum per ordered criterion, on that criterion's range.
        for c in subset_criteria(self.criteria):
            unit = scale_unit(c["scale"])
            self.fields[SUBSET_PREFIX + c["slug"]] = forms.FloatField(
                label=f"Table 2 subset: mean {c['name']} ≥",
                required=False,
                min_value=unit.low,
                max_value=unit.high,
                help_text=f"{unit.range_text()}; empty: no minimum on {c['name']}.",
            )
        for name in list(self.fields):
            key = "subset_min" if name.startswith(SUBSET_PREFIX) else name
            if key not in self.offered:
                del self.fields[name]

    def initial_from(self, settings: dict[str, Any] | None) -> dict[str, Any]:
        """Form values showing ``settings`` (e.g. those of the report on the page), or the
        defaults fitted to this study's design."""
        s = {**report_settings_defaults(self.criteria), **(settings or {})}
        subset = s.get("subset_min") or {}
        out = {
            "criterion": s["criterion"],
            "normalize": s["normalize"] or "",
            "include_controls_in_mean": s["include_controls_in_mean"],
            "include_metrics": s["include_metrics"],
            "confidence_level": s["confidence_level"],
            "significance_level": s["significance_level"],
            "seed": s["seed"],
            "n_boot": s["n_boot"],
            "min_shared": s.get("min_shared", 30),
        }
        out |= {SUBSET_PREFIX + c["slug"]: subset.get(c["slug"]) for c in subset_criteria(self.criteria)}
        return {k: v for k, v in out.items() if k in self.fields}

    def settings(self) -> dict[str, Any]:
        """The cleaned values as report settings (only those the protocol reads)."""
        d = self.cleaned_data
        subset = {
            c["slug"]: d[SUBSET_PREFIX + c["slug"]]
            for c in subset_criteria(self.criteria)
            if d.get(SUBSET_PREFIX + c["slug"]) is not None
        }
        out = {
            "criterion": d.get("criterion"),
            "normalize": d.get("normalize") or None,
            "include_controls_in_mean": bool(d.get("include_controls_in_mean")),
            "include_metrics": bool(d.get("include_metrics")),
            "confidence_level": d.get("confidence_level"),
            "significance_level": d.get("significance_level"),
            "seed": d.get("seed"),
            "n_boot": d.get("n_boot"),
            "subset_min": subset or None,
            "min_shared": d.get("min_shared") or DEFAULT_SETTINGS["min_shared"],
        }
        return {k: v for k, v in out.items() if k in self.offered}
