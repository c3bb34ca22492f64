"""Forms of the dashboard pages: the rate, adaptive allocation, the planner, the bonus rule."""

from __future__ import annotations

from decimal import Decimal

from django import forms


class RateForm(forms.Form):
    item_rate = forms.DecimalField(label="Cost per judged item", min_value=Decimal("0"), max_digits=9, decimal_places=4)
    currency = forms.RegexField(
        label="Currency",
        regex=r"^[A-Za-z]{1,8}$",
        initial="GBP",
        error_messages={"invalid": "Use a currency code of letters, e.g. GBP or USD."},
    )


class AdaptiveForm(forms.Form):
    enabled = forms.BooleanField(label="Adaptive allocation", required=False)
    stop_when_stable = forms.BooleanField(label="Stop by itself when the ranking is stable", required=False)
    level = forms.FloatField(label="Level: P(ranking wrong) at most", min_value=0.001, max_value=0.5, initial=0.05)
    min_judgments = forms.IntegerField(label="Never stop before this many judgments", min_value=0, initial=30)
    min_judges = forms.IntegerField(
        label="… nor before this many judges (excluded and screened-out judges never count)",
        min_value=2,
        max_value=1000,
        initial=3,
    )
    max_judge_share = forms.FloatField(
        label="… nor while one judge gave more than this share of the judgments",
        min_value=0.05,
        max_value=0.9,
        initial=0.5,
    )
    window = forms.IntegerField(label="Choose among the judge's next … items", min_value=1, max_value=100, initial=2)


class PlanForm(forms.Form):
    source = forms.ChoiceField(
        label="Assumptions", choices=[("pilot", "the study's judgments"), ("stated", "stated below")], initial="pilot"
    )
    criterion = forms.CharField(
        label="Pilot's criterion (empty: overall, else the first; ESA: the score)", max_length=64, required=False
    )
    n_originals = forms.IntegerField(label="Originals", min_value=2, max_value=20_000)
    n_judges = forms.IntegerField(label="Judges", min_value=1, max_value=500, initial=3)
    judges_per_item = forms.IntegerField(
        label="Judges per item (empty: all)", min_value=1, max_value=500, required=False
    )
    level = forms.FloatField(label="Significance level", min_value=0.0001, max_value=0.5, initial=0.05)
    delta = forms.FloatField(label="Difference to separate (points)", min_value=0.01, max_value=100, initial=0.3)
    n_simulations = forms.IntegerField(label="Simulations", min_value=10, max_value=2000, initial=200)
    system_means = forms.CharField(
        label="System means (stated: name=mean, …)",
        required=False,
        widget=forms.TextInput(attrs={"placeholder": "human=3.9, machine=3.4"}),
    )
    item_sd = forms.FloatField(label="Item spread (sd)", min_value=0, max_value=100, initial=0.7)
    judge_bias_sd = forms.FloatField(label="Judge bias (sd)", min_value=0, max_value=100, initial=0.25)
    noise_sd = forms.FloatField(label="Judge noise (sd)", min_value=0, max_value=100, initial=0.6)


class BonusForm(forms.Form):
    per_item = forms.DecimalField(
        label="Per rated item", min_value=Decimal("0"), max_digits=9, decimal_places=4, initial=Decimal("0")
    )
    per_completion = forms.DecimalField(
        label="Per accepted completion", min_value=Decimal("0"), max_digits=9, decimal_places=4, initial=Decimal("0")
    )
    reason = forms.CharField(
        label="Reason (MTurk shows it to the worker)", max_length=300, initial="Bonus for your ratings"
    )
