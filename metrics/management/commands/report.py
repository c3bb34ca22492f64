"""``manage.py report``: build a study's report now (no worker) and write every export.

    python manage.py report STUDY --out DIR [--normalize z] [--seed N] [--n-boot N]
        [--confidence 0.95] [--significance 0.05] [--criterion overall]
        [--no-controls-in-mean] [--no-metrics] [--subset adequacy=4,fluency=4 | --no-subset]

STUDY is the study's id or name. The report is stored like one built from the web
page (so the Report tab shows it) and DIR receives ``report.json``, ``report.tex``,
``report.html``, ``tables/*.csv``, ``plots/*.svg`` and a ZIP of all of them. Judges
excluded on the judge QC page are left out. Errors (no such study, no judgments,
bad settings) give a one-line message and a non-zero exit status.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from config.jobs.enums import JobStatus
from metrics.reports.exports.bundle import report_write_all
from metrics.reports.exports.latex import warning_lines
from metrics.reports.services.build import report_build
from metrics.reports.services.queueing import report_create

from .simulate_judges import study_from_arg, validation_message


def _subset(text: str) -> dict[str, float]:
    out = {}
    for part in text.split(","):
        if not part.strip():
            continue
        name, sep, value = part.partition("=")
        if not sep:
            raise CommandError(f"--subset takes criterion=minimum pairs, e.g. adequacy=4,fluency=4 (got {part!r})")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise CommandError(f"--subset: {value!r} is not a number") from None
    return out


class Command(BaseCommand):
    help = "Build a study's agreement and correlation report synchronously and write every export into a directory."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's id or name")
        parser.add_argument("--out", required=True, help="directory for the exports (created if missing)")
        parser.add_argument(
            "--normalize",
            choices=["none", "z"],
            default="none",
            help="z: average per-judge z-scores instead of raw scores",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--n-boot", type=int, default=None, help="bootstrap resamples (default 1000, 500 above 50,000 items)"
        )
        parser.add_argument("--confidence", type=float, default=0.95)
        parser.add_argument("--significance", type=float, default=0.05)
        parser.add_argument(
            "--criterion",
            default=None,
            help="target criterion (default overall, or the study's first criterion without one)",
        )
        parser.add_argument(
            "--no-controls-in-mean", action="store_true", help="leave controls out of the human reference"
        )
        parser.add_argument("--no-metrics", action="store_true", help="do not correlate the study's metric runs")
        parser.add_argument("--subset", default=None, help="Table 2 subset, e.g. adequacy=4,fluency=4 (the default)")
        parser.add_argument("--no-subset", action="store_true", help="no Table 2 subset")
        parser.add_argument(
            "--min-shared",
            type=int,
            default=30,
            help="items two judges must share to enter the inter-judge summary, and items every "
            "judge must have rated for an ICC (default 30)",
        )

    def handle(self, *args, **opts):
        study = study_from_arg(opts["study"])
        settings = {
            "criterion": opts["criterion"],
            "normalize": None if opts["normalize"] == "none" else "z",
            "seed": opts["seed"],
            "n_boot": opts["n_boot"],
            "confidence_level": opts["confidence"],
            "significance_level": opts["significance"],
            "include_controls_in_mean": not opts["no_controls_in_mean"],
            "include_metrics": not opts["no_metrics"],
            "min_shared": opts["min_shared"],
        }
        if opts["criterion"] is None:
            del settings["criterion"]  # the study's default target
        if opts["no_subset"]:
            settings["subset_min"] = None
        elif opts["subset"] is not None:
            settings["subset_min"] = _subset(opts["subset"])
        try:
            report = report_create(study=study, settings=settings, enqueue=False)
        except ValidationError as exc:
            raise CommandError(validation_message(exc)) from None
        if report.status != JobStatus.QUEUED:
            raise CommandError(
                f"report #{report.pk} with these settings is already being built by a worker; "
                "wait for it or change a setting"
            )
        report = report_build(report_id=report.pk)
        if report.status != JobStatus.SUCCEEDED:
            raise CommandError(report.error or f"report #{report.pk} ended {report.status}")
        written = report_write_all(report, opts["out"])
        result = report.result
        assert result is not None  # a succeeded report has its result
        summary = result["summary"]
        self.stdout.write(
            f"report #{report.pk} of '{study.name}': {summary['n_judgments']} scores, "
            f"{summary['n_judges']} judges, {summary['n_items']} items"
            + (f"; excluded: {', '.join(report.excluded_judges)}" if report.excluded_judges else "")
        )
        mean = result["table1"]["mean_pearson"]
        target = report.settings["criterion"]
        used_pairs = (result["table1"].get("summary") or {}).get("sentence", {}).get("n_pairs")
        self.stdout.write(
            f"inter-judge Pearson on {target} (Fisher-z mean weighted by n-3, {used_pairs} of "
            f"{len(result['table1']['pairs'])} pairs sharing >= {result['table1'].get('min_shared')} "
            f"items): sentence {_num(mean['sentence'])}, system {_num(mean['system'])}"
        )
        alpha = (result["agreement"].get(target) or {}).get("krippendorff_alpha", {}).get("interval") or {}
        if alpha:
            self.stdout.write(
                f"Krippendorff's alpha (interval) on {target}: {_num(alpha.get('statistic'))} "
                f"[{_num(alpha.get('ci_low'))}, {_num(alpha.get('ci_high'))}]"
            )
        used = [r["name"] for r in report.metric_runs if r.get("used")]
        self.stdout.write(f"metrics correlated: {', '.join(used) if used else 'none'}")
        for line in warning_lines(result):
            self.stdout.write(line)
        self.stdout.write(f"wrote {len(written)} files to {opts['out']}")


def _num(x) -> str:
    return "n/a" if x is None else f"{x:.3f}"
