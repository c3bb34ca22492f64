"""``manage.py metrics``: list the registered automatic metrics.

    python manage.py metrics [--json | --markdown]

For each metric (sorted by slug): its one-line description, whether higher is
better, whether it needs a ``reference`` column, its card (what it measures,
direction, range, needs, reference, caveats, what to prepare first; see
``metrics.core.cards``), its parameters with type, default and allowed values, and
its resources with their default location (or "unavailable" when that default is
missing). ``--json`` prints a list of objects ``{"slug", "description",
"unavailable" (null, or why the metric cannot run here
with the command that installs what it needs), "higher_is_better", "card": {...} | null, "params": [{"name", "type", "default",
"choices", "help"}], "resources": [{"name", "help", "available"}]}``.
``--markdown`` prints the documentation page docs/metrics-cards.md (``make
docs-cards`` writes it). No database is needed.
"""

from __future__ import annotations

import json
from dataclasses import asdict

from django.core.management.base import BaseCommand

from metrics.core.cards import card_rows, cards_markdown
from metrics.core.registry import available_metrics


def _describe(cls) -> dict:
    metric = None
    try:
        metric = cls()
    except ValueError:
        pass  # a metric whose defaults need resources still lists its parameters
    needs_ref = bool(metric.needs_references) if metric is not None else None
    missing = set(metric.missing_resources()) if metric is not None else set(cls.resources)
    reason = getattr(cls, "unavailable_reason", None)
    return {
        "slug": cls.slug,
        "description": cls.description,
        "unavailable": reason() if callable(reason) else None,
        "higher_is_better": cls.higher_is_better,
        "needs_reference": needs_ref,
        "card": asdict(cls.card) if cls.card is not None else None,
        "params": [
            {
                "name": p.name,
                "type": p.type.__name__,
                "default": p.default,
                "choices": list(p.choices) if p.choices is not None else None,
                "help": p.help,
            }
            for p in cls.params.values()
        ],
        "resources": [
            {"name": r.name, "help": r.help, "available": r.name not in missing} for r in cls.resources.values()
        ],
    }


def _fmt_default(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Command(BaseCommand):
    help = "List the automatic metrics: slug, description, parameters (with defaults) and resources."
    requires_system_checks: list = []

    def add_arguments(self, parser):
        out = parser.add_mutually_exclusive_group()
        out.add_argument("--json", action="store_true", help="print a JSON list")
        out.add_argument("--markdown", action="store_true", help="print the metric cards as the docs page")

    def handle(self, *args, **opts):
        if opts["markdown"]:
            self.stdout.write(cards_markdown(available_metrics()), ending="")
            return
        classes = {cls.slug: cls for cls in available_metrics()}
        entries = [_describe(cls) for cls in classes.values()]
        if opts["json"]:
            self.stdout.write(json.dumps(entries, indent=2))
            return
        for e in entries:
            direction = "higher is better" if e["higher_is_better"] else "lower is better"
            ref = "; needs a reference column" if e["needs_reference"] else ""
            self.stdout.write(f"{e['slug']}: {e['description']} ({direction}{ref})")
            if e["unavailable"]:
                self.stdout.write(f"    UNAVAILABLE here: {e['unavailable']}")
            card = classes[e["slug"]].card
            for label, text in card_rows(card) if card is not None else []:
                self.stdout.write(f"    {label}: {text}")
            for p in e["params"]:
                choices = f" {{{', '.join(map(str, p['choices']))}}}" if p["choices"] else ""
                self.stdout.write(f"    {p['name']}={_fmt_default(p['default'])}  ({p['type']}{choices}) {p['help']}")
            for r in e["resources"]:
                state = "" if r["available"] else "  [default unavailable: give --resource]"
                self.stdout.write(f"    resource {r['name']}: {r['help']}{state}")
