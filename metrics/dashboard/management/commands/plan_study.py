"""``manage.py plan_study``: how many judgments does a study need?

    python manage.py plan_study --study ID [--stated] [--originals N] [--judges J] [--per-item K]
        [--systems a=3.4,b=3.1] [--item-sd S] [--bias-sd S] [--noise-sd S]
        [--pilot FILE.csv] [--delta D] [--level L] [--simulations N] [--seed S] [--json]

Assumptions come from the study's own judgments (its pilot, imported ones included) with
``--study``, from a tidy judgments file with ``--pilot`` (columns ``judge``, ``item``,
``original``, ``system``, ``criterion``, ``score``, optionally ``is_control``), or as stated
(``--systems`` and the noise options, or ``--stated`` with a study for its systems). Prints
the probability that the ranking is right and that neighbours are separated (with their
intervals over the simulations), the expected width of α's interval and the originals ×
judges needed to separate two systems ``--delta`` apart. Bad input: a one-line error and a
non-zero exit. The computing is :func:`metrics.core.planning.plan_study`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Study
from metrics.core.planning import assumptions_from_pilot, plan_study
from metrics.core.stats.results import jsonable
from metrics.dashboard.services.planning import plan_cost_check, plan_params_clean, study_plan


class Command(BaseCommand):
    help = "Simulate a study before (or while) running it: how likely is its ranking right, and how many judgments are needed?"

    def add_arguments(self, parser):
        parser.add_argument("--study", type=int, help="the study's id (its judgments are the pilot)")
        parser.add_argument("--stated", action="store_true", help="use the stated assumptions, not the study's pilot")
        parser.add_argument("--pilot", type=Path, help="a tidy judgments CSV to estimate the assumptions from")
        parser.add_argument(
            "--criterion", help="the pilot's criterion (default: overall, else the design's first; ESA: the score)"
        )
        parser.add_argument("--originals", type=int, dest="n_originals")
        parser.add_argument("--judges", type=int, dest="n_judges")
        parser.add_argument("--per-item", type=int, dest="judges_per_item")
        parser.add_argument("--systems", dest="system_means", help="name=mean pairs, e.g. human=3.9,machine=3.4")
        parser.add_argument("--item-sd", type=float, dest="item_sd")
        parser.add_argument("--bias-sd", type=float, dest="judge_bias_sd")
        parser.add_argument("--noise-sd", type=float, dest="noise_sd")
        parser.add_argument("--delta", type=float)
        parser.add_argument("--level", type=float)
        parser.add_argument("--power", type=float)
        parser.add_argument("--simulations", type=int, dest="n_simulations")
        parser.add_argument("--seed", type=int)
        parser.add_argument("--json", action="store_true", help="print the plan as JSON")

    def handle(self, *args, **o):
        study = None
        if o["study"] is not None:
            study = Study.objects.filter(pk=o["study"]).first()
            if study is None:
                raise CommandError(f"no study with id {o['study']}")
        raw = {
            k: o[k]
            for k in (
                "n_originals",
                "n_judges",
                "judges_per_item",
                "system_means",
                "item_sd",
                "judge_bias_sd",
                "noise_sd",
                "delta",
                "level",
                "power",
                "n_simulations",
                "seed",
                "criterion",
            )
            if o[k] is not None
        }
        raw["source"] = "pilot" if study is not None and not o["stated"] and not o["system_means"] else "stated"
        try:
            params = plan_params_clean(raw, study=study)
            if o["pilot"] is not None:
                plan = self._from_file(o["pilot"], params)
            else:
                if study is None and not params["system_means"]:
                    raise CommandError("give --study, --pilot or --systems")
                plan = study_plan(study=study, params=params)
        except ValidationError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from exc
        if o["json"]:
            self.stdout.write(json.dumps(plan, indent=2))
            return
        self._print(plan)

    def _from_file(self, path: Path, params: dict) -> dict:
        try:
            frame = pd.read_csv(path)
        except (OSError, ValueError) as exc:
            raise CommandError(f"cannot read {path}: {exc}") from exc
        missing = {"judge", "item", "original", "system", "criterion", "score"} - set(frame.columns)
        if missing:
            raise CommandError(f"{path} lacks the column(s) {', '.join(sorted(missing))}")
        if "is_control" not in frame.columns:
            frame["is_control"] = False
        try:
            a = (
                assumptions_from_pilot(frame, criterion=params["criterion"])
                if params["criterion"]
                else assumptions_from_pilot(frame)
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        plan_cost_check(params=params, assumptions=a)
        result = plan_study(
            a,
            n_originals=params["n_originals"],
            n_judges=params["n_judges"],
            judges_per_item=params["judges_per_item"],
            level=params["level"],
            n_simulations=params["n_simulations"],
            delta=params["delta"],
            power=params["power"],
            seed=params["seed"],
        )
        return jsonable({**result.to_dict(), "params": params})

    def _print(self, plan: dict) -> None:
        a = plan["assumptions"]
        w = self.stdout.write
        w(
            f"Assumptions ({a['source']}): item sd {a['item_sd']}, judge bias sd {a['judge_bias_sd']}, "
            f"noise sd {a['noise_sd']}"
        )
        w("  system means: " + ", ".join(f"{k}={v}" for k, v in a["system_means"].items()))
        k = plan["judges_per_item"] or plan["n_judges"]
        w(
            f"Plan: {plan['n_originals']} originals × {len(a['system_means'])} systems × {k} judges per item "
            f"= {plan['judgments']} judgments; {plan['n_simulations']} simulations"
        )
        for label, key in (
            ("P(ranking right)", "ranking_right"),
            (f"P(neighbours separated at {plan['level']})", "pairs_separated"),
        ):
            p = plan[key]
            w(f"  {label}: {p['estimate']:.3f} [{p['low']:.3f}, {p['high']:.3f}]")
        if plan["agreement_width"] is not None:
            w(
                f"  expected width of alpha's interval: {plan['agreement_width']:.3f} (alpha about {plan['agreement_alpha']:.3f})"
            )
        if plan["separation"]:
            w(f"To separate two systems {plan['delta']} apart (power {plan['power']}):")
            for r in plan["separation"]:
                p = r["power"]
                sim = f" (simulated power {p['estimate']:.2f} [{p['low']:.2f}, {p['high']:.2f}])" if p else ""
                w(f"  k={r['judges_per_item']}: {r['n_originals']} originals, {r['judgments']} judgments{sim}")
