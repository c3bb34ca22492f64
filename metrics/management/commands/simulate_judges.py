"""``manage.py simulate_judges``: fill an open study with simulated judgments, and plan judges.

    python manage.py simulate_judges STUDY --judges N [--judges-per-item K] [--random-clickers M]
        [--seed S] [--item-sd 0.7] [--judge-bias-sd 0.25] [--noise-sd 0.6] [--control-slip 0.15]
        [--target-reliability 0.8] [--plan-only]

STUDY is the study's id or name; its judging must be open. Creates judges
``sim-judge-01`` … (accounts nobody can log in as), adds them to the study, builds
their assignments through the judging app and stores their judgments like submitted
ones, so the study's progress, judge QC and reports show them. Scores follow
``metrics.core.stats.simulate_judgments`` (latent item quality, judge bias and noise;
the last M judges click at random). Then prints how reliable the mean of k judges is
and how wide Krippendorff's α's interval is for a study of this size
(``plan_judges``), and how many judges the target reliability needs
(``judges_needed``). Thin wrapper over ``annotation.judging.protocols.absolute.simulation.simulated_judges_fill``.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.judging.protocols.absolute.simulation import simulated_judges_fill
from annotation.models import Candidate, Study
from metrics.core.stats.simulate import judges_needed, plan_judges


def validation_message(exc: ValidationError) -> str:
    """One line from a ValidationError, naming the field of each message."""
    if hasattr(exc, "error_dict"):
        return "; ".join(f"{k}: {m}" if k != "__all__" else m for k, msgs in exc.message_dict.items() for m in msgs)
    return " ".join(exc.messages)


def study_from_arg(value: str) -> Study:
    """The study named ``value``, or with id ``value``; ``CommandError`` otherwise."""
    study = Study.objects.filter(name=value).first()
    if study is None and value.isdigit():
        study = Study.objects.filter(pk=int(value)).first()
    if study is None:
        raise CommandError(f"no study with the name or id {value!r}")
    return study


class Command(BaseCommand):
    help = "Fill an open study with simulated judges' judgments and print how many judges a target precision needs."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's id or name")
        parser.add_argument("--judges", type=int, required=True, help="number of simulated judges")
        parser.add_argument(
            "--judges-per-item", type=int, default=None, help="each item rated by K of them (default: all)"
        )
        parser.add_argument("--random-clickers", type=int, default=0, help="the last M judges click at random")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--item-sd", type=float, default=0.7, help="sd of latent item quality (1–5 scale)")
        parser.add_argument("--judge-bias-sd", type=float, default=0.25, help="sd of a judge's leniency")
        parser.add_argument("--noise-sd", type=float, default=0.6, help="sd of a single rating's noise")
        parser.add_argument(
            "--control-slip", type=float, default=0.15, help="chance a careful judge scores a control one point off"
        )
        parser.add_argument(
            "--target-reliability",
            type=float,
            default=0.8,
            help="reliability of the judges' mean to plan for (Spearman–Brown)",
        )
        parser.add_argument("--plan-only", action="store_true", help="only print the plan; write nothing")
        parser.add_argument(
            "--profile",
            help="JSON file of latent per-system means: "
            '{"systems": {"<system>": {"adequacy": 4.2, "fluency": 4.5, ...}}} '
            "(e.g. fixtures/demo/simulation_profile.json); other systems get default profiles",
        )

    def handle(self, *args, **opts):
        study = study_from_arg(opts["study"])
        for name in ("item_sd", "judge_bias_sd", "noise_sd"):
            if opts[name] < 0:
                raise CommandError(f"--{name.replace('_', '-')} must not be negative")
        if opts["item_sd"] == 0:
            raise CommandError("--item-sd must be positive (items must differ for any agreement to exist)")
        if not 0 < opts["target_reliability"] < 1:
            raise CommandError("--target-reliability must be strictly between 0 and 1")
        if not 0 <= opts["control_slip"] <= 1:
            raise CommandError("--control-slip must be between 0 and 1")
        profiles = _read_profile(opts["profile"]) if opts["profile"] else None
        if not opts["plan_only"]:
            try:
                summary = simulated_judges_fill(
                    study=study,
                    n_judges=opts["judges"],
                    judges_per_item=opts["judges_per_item"],
                    n_random_clickers=opts["random_clickers"],
                    seed=opts["seed"],
                    item_sd=opts["item_sd"],
                    judge_bias_sd=opts["judge_bias_sd"],
                    noise_sd=opts["noise_sd"],
                    control_slip=opts["control_slip"],
                    profiles=profiles,
                )
            except ValidationError as exc:
                raise CommandError(validation_message(exc)) from None
            per_item = (
                f"{summary.judges_per_item} judges per item"
                if summary.judges_per_item
                else "every judge rates every item"
            )
            self.stdout.write(
                f"study '{study.name}': {summary.judgments_created} simulated judgments by {len(summary.judges)} "
                f"judges ({summary.judges[0]} … {summary.judges[-1]}) over {summary.items} items, {per_item}"
                + (
                    f"; {summary.items_already_rated} items were already rated and kept"
                    if summary.items_already_rated
                    else ""
                )
            )
            if summary.random_clickers:
                self.stdout.write(f"random clickers (judge QC should flag them): {', '.join(summary.random_clickers)}")
        self._plan(study, opts)

    def _plan(self, study: Study, opts) -> None:
        n_items = Candidate.objects.filter(original__study=study).count()
        variances = {"item_sd": opts["item_sd"], "judge_bias_sd": opts["judge_bias_sd"], "noise_sd": opts["noise_sd"]}
        counts = sorted({2, 3, 4, 5, 6, 8, 10, max(2, opts["judges_per_item"] or opts["judges"])})
        rows = plan_judges(n_items=max(n_items, 2), judge_counts=counts, n_boot=200, seed=opts["seed"], **variances)
        self.stdout.write("")
        self.stdout.write(
            f"planning for {n_items} items (item sd {opts['item_sd']}, judge bias sd "
            f"{opts['judge_bias_sd']}, noise sd {opts['noise_sd']}):"
        )
        self.stdout.write(f"{'judges':>7} {'reliability':>12} {'item mean ±':>12} {'alpha':>7} {'alpha CI width':>15}")
        for r in rows:
            alpha = "—" if r.alpha is None else f"{r.alpha:.3f}"
            width = "—" if r.alpha_ci_width is None else f"{r.alpha_ci_width:.3f}"
            self.stdout.write(
                f"{r.n_judges:>7} {r.reliability_of_mean:>12.3f} {r.item_mean_ci_halfwidth:>12.2f} "
                f"{alpha:>7} {width:>15}"
            )
        k = judges_needed(opts["target_reliability"], **variances)
        self.stdout.write(f"judges needed for a reliability of {opts['target_reliability']:g}: {k}")


def _read_profile(path: str) -> dict[str, dict[str, float]]:
    import json

    try:
        data = json.loads(open(path, encoding="utf-8").read())
    except OSError as exc:
        raise CommandError(f"--profile {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise CommandError(f"--profile {path}: not valid JSON ({exc})") from None
    systems = data.get("systems") if isinstance(data, dict) else None
    if not isinstance(systems, dict) or not all(isinstance(v, dict) for v in systems.values()):
        raise CommandError(f'--profile {path}: expected {{"systems": {{"<system>": {{"<criterion>": <1-5>, ...}}}}}}')
    return systems
