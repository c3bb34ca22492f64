"""Forms of the metrics pages: start a run, upload a resource, train a PEM model.

The run form has one field per parameter of every registered metric (named
``p__<slug>__<param>``, initial value = the metric's default) and one per
resource (``r__<slug>__<name>``). The page shows only the selected metric's
fields (``static/metrics/runs.js``); without JavaScript all are visible and
only the selected metric's fields are read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms

from .enums import Against, ResourceKind
from .models import MetricResource

NONE_TEXT = "none"


def _field_name(prefix: str, slug: str, name: str) -> str:
    return f"{prefix}__{slug}__{name}"


def _default_text(value: Any) -> str:
    if value is None:
        return NONE_TEXT
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class _MetricSelect(forms.Select):
    """A drop-down whose unavailable metrics are listed but cannot be chosen (``disabled``)."""

    unavailable: frozenset[str] = frozenset()

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        if value in self.unavailable:
            option["attrs"]["disabled"] = True
        return option


class MetricRunForm(forms.Form):
    metric = forms.ChoiceField(label="Metric", widget=_MetricSelect)
    against = forms.ChoiceField(
        label="Compare the candidate with",
        choices=Against.choices,
        initial=Against.ORIGINAL,
        help_text="For metrics with an 'against' parameter (BLEU, chrF, TER, …); others use the original.",
    )

    def __init__(self, *args, catalog: list[dict], resources: list[MetricResource], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.catalog = catalog
        # Slugs only: the long descriptions were cut off in the drop-down (the chosen
        # metric's description and card show right below it). A metric that cannot run on
        # this server (e.g. the semantic ones without the optional extra) is listed last,
        # disabled and never preselected; why it is unavailable shows below the drop-down.
        unavailable = [m for m in catalog if m.get("unavailable")]
        available = [m for m in catalog if not m.get("unavailable")]
        metric = self.fields["metric"]
        assert isinstance(metric, forms.ChoiceField)
        metric.choices = [(m["slug"], m["slug"]) for m in available] + [
            (m["slug"], f"{m['slug']} (unavailable)") for m in unavailable
        ]
        widget = self.fields["metric"].widget
        assert isinstance(widget, _MetricSelect)
        widget.unavailable = frozenset(m["slug"] for m in unavailable)
        self.unavailable = [(m["slug"], m["unavailable"]) for m in unavailable]
        if available and not self.is_bound:
            self.fields["metric"].initial = available[0]["slug"]
        resource_choices = [(str(r.pk), f"{r.name} ({r.get_kind_display()}, {r.short_hash})") for r in resources]
        self._groups: list[dict] = []
        for m in catalog:
            slug = m["slug"]
            params, res = [], []
            for p in m["params"]:
                if p["name"] == "against":
                    continue
                name = _field_name("p", slug, p["name"])
                self.fields[name] = self._param_field(p)
                params.append(name)
            prepare = (m.get("card") or {}).get("prepare")
            for r in m["resources"]:
                name = _field_name("r", slug, r["name"])
                empty = "the built-in default" if r["has_default"] else "— choose an uploaded resource —"
                # A resource without a default must be prepared first: say how (the card's
                # "prepare" step) rather than the resource's internal description.
                help_text = prepare if prepare and not r["has_default"] else r["help"]
                self.fields[name] = forms.ChoiceField(
                    label=r["name"], required=False, choices=[("", empty)] + resource_choices, help_text=help_text
                )
                res.append(name)
            self._groups.append(
                {
                    "slug": slug,
                    "description": m["description"],
                    "card": m.get("card"),
                    "unavailable": m.get("unavailable"),
                    "params": params,
                    "resources": res,
                }
            )

    @staticmethod
    def _param_field(p: dict) -> forms.Field:
        help_text = f"{p['help']} (default: {_default_text(p['default'])})"
        label = p["name"]
        if p["type"] == "bool":
            return forms.ChoiceField(
                label=label,
                required=False,
                help_text=help_text,
                choices=[("true", "true"), ("false", "false")],
                initial=_default_text(p["default"]),
            )
        if p["choices"]:
            choices = [(_default_text(c), _default_text(c)) for c in p["choices"]]
            return forms.ChoiceField(
                label=label, required=False, help_text=help_text, choices=choices, initial=_default_text(p["default"])
            )
        attrs = {}
        if p["type"] in ("int", "float"):
            attrs["inputmode"] = "decimal" if p["type"] == "float" else "numeric"
        initial = "" if p["default"] is None else _default_text(p["default"])
        return forms.CharField(
            label=label,
            required=False,
            help_text=help_text,
            initial=initial,
            widget=forms.TextInput(attrs=attrs | {"placeholder": _default_text(p["default"])}),
        )

    def metric_groups(self) -> list[dict]:
        """Per metric: slug, description and its bound parameter and resource fields."""
        return [
            {
                "slug": g["slug"],
                "description": g["description"],
                "card": g["card"],
                "unavailable": g["unavailable"],
                "params": [self[n] for n in g["params"]],
                "resources": [self[n] for n in g["resources"]],
            }
            for g in self._groups
        ]

    def run_arguments(self) -> dict[str, Any]:
        """``metric``, ``against``, ``params`` and ``resources`` for ``metric_run_create``.

        Blank parameter fields mean "the default" and are left out, except for
        nullable parameters, where blank is given as none.
        """
        slug = self.cleaned_data["metric"]
        entry = next(m for m in self.catalog if m["slug"] == slug)
        params: dict[str, Any] = {}
        for p in entry["params"]:
            if p["name"] == "against":
                continue
            raw = self.cleaned_data.get(_field_name("p", slug, p["name"]))
            if raw in (None, ""):
                continue
            params[p["name"]] = raw
        resources = {}
        for r in entry["resources"]:
            raw = self.cleaned_data.get(_field_name("r", slug, r["name"]))
            if raw:
                resources[r["name"]] = int(raw)
        return {"metric": slug, "against": self.cleaned_data["against"], "params": params, "resources": resources}


class MetricResourceUploadForm(forms.Form):
    name = forms.CharField(max_length=200, required=False, help_text="Defaults to the file name.")
    kind = forms.ChoiceField(choices=ResourceKind.choices)
    file = forms.FileField(help_text="Stored with its SHA-256; runs record the hash in their signature.")
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def clean_file(self):
        f = self.cleaned_data["file"]
        from metrics.services.resources import RESOURCE_MAX_BYTES

        if f.size > RESOURCE_MAX_BYTES:
            raise forms.ValidationError(f"The file is {f.size:,} bytes; the limit is {RESOURCE_MAX_BYTES:,}.")
        return f


class PemTrainForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="To tell models apart, e.g. 'demo, bible phrase table'.")
    test_share = forms.FloatField(
        initial=0.2,
        min_value=0.05,
        max_value=0.5,
        help_text="Share of the originals held out for the test correlation (split by original).",
    )
    seed = forms.IntegerField(initial=0, min_value=0, help_text="Seed of the split and of the cross-validation folds.")

    def __init__(
        self, *args, resource_specs: list[dict] | None = None, resources: Sequence[MetricResource] = (), **kwargs
    ):
        super().__init__(*args, **kwargs)
        choices = [(str(r.pk), f"{r.name} ({r.get_kind_display()}, {r.short_hash})") for r in resources]
        self.resource_fields = []
        for spec in resource_specs or []:
            name = f"r__{spec['name']}"
            empty = "the built-in default" if spec["has_default"] else "— choose an uploaded resource —"
            self.fields[name] = forms.ChoiceField(
                label=spec["name"], required=False, choices=[("", empty)] + choices, help_text=spec["help"]
            )
            self.resource_fields.append(name)

    def feature_resources(self) -> dict[str, int]:
        return {
            name.removeprefix("r__"): int(self.cleaned_data[name])
            for name in self.resource_fields
            if self.cleaned_data.get(name)
        }
