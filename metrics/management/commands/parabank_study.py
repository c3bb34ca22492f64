"""``manage.py parabank_study``: ParaBank's meta-evaluation in the product, in one command.

    python manage.py parabank_study [DIR] [--study NAME] [--owner USERNAME]
        [--metric SLUG ...] [--no-pem] [--folds 5] [--fresh] [--out DIR]
        [--markdown FILE] [--n-boot N]

1. imports ParaBank's human evaluation (DIR, default ``../shared/data/parabank``) as a
   study with ``import_parabank`` (44 crowd judges, 0–100 similarity, 0–2
   grammaticality) — or reuses the study of that name when it exists;
2. runs every registered metric on it as ordinary metric runs (this process, no
   worker): metrics whose optional extra is missing, that need a reference paraphrase
   (ParaBank has none) or a resource not installed are listed as skipped with the
   reason; a metric that already has a finished run with the same parameters is not
   run again unless ``--fresh``;
3. trains PEM on the study's similarity scores with grouped cross-validation by
   original and scores it out of fold (``metrics.services.pem_out_of_fold_run_create``);
4. builds the report (similarity as the target) and writes its exports to ``--out``,
   and the metric meta-evaluation as Markdown to ``--markdown`` and standard output.
"""

from __future__ import annotations

import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Study
from config.jobs.enums import JobStatus
from metrics import selectors as metric_selectors
from metrics.core.registry import available_metrics, create_metric
from metrics.core.stats.results import jsonable
from metrics.models import MetricRun
from metrics.reports.exports.bundle import report_write_all
from metrics.reports.leaderboard_md import meta_evaluation_markdown, system_scores_markdown
from metrics.reports.services.build import report_build
from metrics.reports.services.queueing import report_create
from metrics.services.pem_out_of_fold import pem_out_of_fold_run_create
from metrics.services.runs import metric_run_create
from metrics.services.worker import metric_run_execute

from .simulate_judges import validation_message

#: ParaBank has no reference paraphrases: ParaScore runs as ParaScore.Free.
PARAMS = {"parascore": {"reference_free": "true"}}
DEFAULT_DIR = Path(settings.BASE_DIR).parent / "shared" / "data" / "parabank"


class Command(BaseCommand):
    help = "Import ParaBank as a study, run every metric, PEM out of fold, and build the report's metric leaderboard."

    def add_arguments(self, parser):
        parser.add_argument(
            "directory",
            nargs="?",
            default=str(DEFAULT_DIR),
            help="directory holding ref.tsv and candidates.tsv.xz (default ../shared/data/parabank)",
        )
        parser.add_argument("--study", default="ParaBank evaluation", help="study name (reused when it exists)")
        parser.add_argument("--owner", help="owner username for a new study (default: the first superuser)")
        parser.add_argument(
            "--metric",
            action="append",
            dest="metrics",
            metavar="SLUG",
            help="run only these metrics (repeatable; default: every registered metric)",
        )
        parser.add_argument("--no-pem", action="store_true", help="skip PEM out of fold")
        parser.add_argument("--folds", type=int, default=5, help="outer folds (groups of originals) for PEM")
        parser.add_argument("--fresh", action="store_true", help="run metrics again even if a finished run exists")
        parser.add_argument("--out", help="directory for the report's exports")
        parser.add_argument("--markdown", help="write the leaderboard tables to this Markdown file")
        parser.add_argument("--n-boot", type=int, default=None, help="bootstrap resamples of the report")
        parser.add_argument(
            "--no-report",
            action="store_true",
            help="only import and run metrics (e.g. two processes running different metrics)",
        )

    def handle(self, *args, **opts):
        study = Study.objects.filter(name=opts["study"]).first()
        if study is None:
            owner = opts["owner"]
            if owner is None and not User.objects.filter(is_superuser=True).exists():
                # `make leaderboard` on a fresh database: an owner who cannot sign in.
                user, created = User.objects.get_or_create(username="parabank-import")
                if created:
                    user.set_unusable_password()
                    user.save(update_fields=["password"])
                owner = user.username
            args_ = [opts["directory"], "--study", opts["study"]] + (["--owner", owner] if owner else [])
            call_command("import_parabank", *args_, stdout=self.stdout)
            study = Study.objects.get(name=opts["study"])
        else:
            self.stdout.write(f"using the existing study '{study.name}' (id {study.pk})")

        skipped = self._run_metrics(study, opts)
        if not opts["no_pem"] and (opts["metrics"] is None or "pem" in opts["metrics"]):
            why = self._run_pem(study, opts)
            if why:
                skipped.append(("pem", why))
        if opts["no_report"]:
            return

        settings_ = {"criterion": "similarity", "n_boot": opts["n_boot"], "include_metrics": True}
        try:
            report = report_create(study=study, settings=settings_, enqueue=False)
        except ValidationError as exc:
            raise CommandError(validation_message(exc)) from None
        if report.status == JobStatus.QUEUED:
            report = report_build(report_id=report.pk)
        if report.status != JobStatus.SUCCEEDED:
            raise CommandError(report.error or f"report #{report.pk} ended {report.status}")
        if opts["out"]:
            written = report_write_all(report, opts["out"])
            self.stdout.write(f"wrote {len(written)} files to {opts['out']}")
        assert report.result is not None  # a succeeded report has its result
        text = meta_evaluation_markdown(report.result, skipped=skipped)
        humans = system_scores_markdown(report.result)  # the systems by raw and z similarity
        text = text + ("\n" if text and humans else "") + humans
        if opts["markdown"]:
            Path(opts["markdown"]).write_text(text, encoding="utf-8")
        self.stdout.write(f"report #{report.pk} of '{study.name}'")
        self.stdout.write(text)

    def _run_metrics(self, study: Study, opts) -> list[tuple[str, str]]:
        skipped: list[tuple[str, str]] = []
        wanted = opts["metrics"]
        classes = {c.slug: c for c in available_metrics()}
        unknown = sorted(set(wanted or ()) - set(classes))
        if unknown:
            raise CommandError(f"unknown metric(s): {', '.join(unknown)}")
        # In the order asked for (cheap ones first, say), else by name.
        for slug in [s for s in (wanted or sorted(classes)) if s != "pem"]:
            cls = classes[slug]
            reason = metric_selectors.metric_unavailable_reason(cls)
            if reason:
                skipped.append((slug, f"unavailable: {reason}"))
                continue
            params = PARAMS.get(slug, {})
            try:
                metric = create_metric(slug, params)
            except Exception as exc:  # a metric that cannot even be built here is listed, not fatal
                skipped.append((slug, str(exc)))
                continue
            if metric.needs_references:
                skipped.append((slug, "needs a reference paraphrase, which ParaBank does not have"))
                continue
            if not opts["fresh"] and self._finished(study, slug, metric):
                self.stdout.write(f"  {slug}: finished run exists (--fresh runs it again)")
                continue
            try:
                run = metric_run_create(study=study, metric=slug, params=params, enqueue=False)
            except ValidationError as exc:
                skipped.append((slug, validation_message(exc)))
                continue
            t, c = time.perf_counter(), time.process_time()
            run = metric_run_execute(run_id=run.pk)
            if run.status != JobStatus.SUCCEEDED:
                skipped.append((slug, f"run #{run.pk} {run.status}: {run.error}"))
                continue
            self.stdout.write(
                f"  {slug}: {run.n:,} candidates in {time.perf_counter() - t:.1f} s wall, "
                f"{time.process_time() - c:.1f} CPU-s"
            )
        for slug, why in skipped:
            self.stdout.write(f"  {slug}: skipped — {why}")
        return skipped

    @staticmethod
    def _finished(study: Study, slug: str, metric) -> bool:
        params = {k: jsonable(v) for k, v in metric.param_values.items()}
        return MetricRun.objects.filter(
            study=study, metric=slug, status=JobStatus.SUCCEEDED, params=params, resources={}
        ).exists()

    def _run_pem(self, study: Study, opts) -> str | None:
        existing = MetricRun.objects.filter(
            study=study, metric="pem", status=JobStatus.SUCCEEDED, signature__startswith="metric:pem-oof|"
        )
        if existing.exists() and not opts["fresh"]:
            self.stdout.write("  pem (out of fold): finished run exists (--fresh runs it again)")
            return None
        t = time.perf_counter()
        try:
            run = pem_out_of_fold_run_create(study=study, criterion="similarity", folds=opts["folds"])
        except ValidationError as exc:
            return validation_message(exc)
        existing.exclude(pk=run.pk).delete()  # one out-of-fold PEM on the board
        self.stdout.write(
            f"  pem (out of fold, {opts['folds']} folds by original): {run.n:,} candidates in "
            f"{time.perf_counter() - t:.1f} s"
        )
        return None
