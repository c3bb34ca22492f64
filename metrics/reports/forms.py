"""The report settings form (what ``services.report_settings_clean`` accepts, as fields)."""

from __future__ import annotations

from typing import Any

from django import forms

from annotation.judging.enums import CRITERIA

from .services import DEFAULT_SETTINGS, MIN_SHARED_MAX, MIN_SHARED_MIN, N_BOOT_MAX, N_BOOT_MIN


class ReportSettingsForm(forms.Form):
    criterion = forms.ChoiceField(label="Target criterion", choices=[(c, c) for c in CRITERIA], initial="overall",
                                  help_text="Tables 1 and 3, the ranking and the leaderboard use this criterion.")
    normalize = forms.ChoiceField(
        label="Human scores", required=False, initial="",
        choices=[("", "raw 1–5 scores (as in PEM)"), ("z", "per-judge z-scores (lenient and harsh judges evened out)")])
    include_controls_in_mean = forms.BooleanField(
        label="Controls in the human reference", required=False, initial=True,
        help_text="Controls enter Table 2 at their expected scores (PEM §5.2). Table 3 and the leaderboard always "
                  "show both: genuine items first, controls in the reference as a second column.")
    include_metrics = forms.BooleanField(label="Correlate the study's metric runs", required=False, initial=True)
    confidence_level = forms.FloatField(label="Confidence level", min_value=0.5, max_value=0.999, initial=0.95)
    significance_level = forms.FloatField(label="Significance level", min_value=0.0001, max_value=0.5, initial=0.05)
    seed = forms.IntegerField(label="Seed (bootstrap, jitter)", min_value=0, max_value=2**32 - 1, initial=0)
    n_boot = forms.IntegerField(label="Bootstrap resamples", required=False, min_value=N_BOOT_MIN, max_value=N_BOOT_MAX,
                                help_text="Empty: 1,000 (500 above 50,000 items).")
    min_shared = forms.IntegerField(
        label="Minimum shared items", required=False, min_value=MIN_SHARED_MIN, max_value=MIN_SHARED_MAX, initial=30,
        help_text="Two judges enter the inter-judge summary only when they share this many items; an ICC needs "
                  "this many items rated by every judge.")
    subset_adequacy = forms.FloatField(label="Table 2 subset: mean adequacy ≥", required=False, min_value=1,
                                       max_value=5, initial=4)
    subset_fluency = forms.FloatField(label="Table 2 subset: mean fluency ≥", required=False, min_value=1,
                                      max_value=5, initial=4)

    def __init__(self, *args, criteria: list[str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        if criteria:  # the study's own criteria (PEM's four by default)
            self.fields["criterion"].choices = [(c, c) for c in criteria]
            if "overall" not in criteria:
                self.fields["criterion"].initial = criteria[0]

    @classmethod
    def initial_from(cls, settings: dict[str, Any] | None) -> dict[str, Any]:
        """Form values showing ``settings`` (e.g. those of the report on the page)."""
        s = {**DEFAULT_SETTINGS, **(settings or {})}
        subset = s.get("subset_min") or {}
        return {
            "criterion": s["criterion"], "normalize": s["normalize"] or "",
            "include_controls_in_mean": s["include_controls_in_mean"], "include_metrics": s["include_metrics"],
            "confidence_level": s["confidence_level"], "significance_level": s["significance_level"],
            "seed": s["seed"], "n_boot": s["n_boot"], "min_shared": s.get("min_shared", 30),
            "subset_adequacy": subset.get("adequacy"), "subset_fluency": subset.get("fluency"),
        }

    def settings(self) -> dict[str, Any]:
        """The cleaned values as report settings."""
        d = self.cleaned_data
        subset = {k: v for k, v in (("adequacy", d.get("subset_adequacy")), ("fluency", d.get("subset_fluency")))
                  if v is not None}
        return {
            "criterion": d["criterion"], "normalize": d.get("normalize") or None,
            "include_controls_in_mean": bool(d.get("include_controls_in_mean")),
            "include_metrics": bool(d.get("include_metrics")),
            "confidence_level": d["confidence_level"], "significance_level": d["significance_level"],
            "seed": d["seed"], "n_boot": d.get("n_boot"), "subset_min": subset or None,
            "min_shared": d.get("min_shared") or DEFAULT_SETTINGS["min_shared"],
        }
