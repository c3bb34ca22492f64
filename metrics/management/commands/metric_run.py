"""python manage.py metric_run STUDY --metric SLUG [--param KEY=VALUE ...] [--wait] | --list

Start a metric run on a study from scripts and notebooks, through the same service as the
Metrics tab (``metric_run_create``): queued for the workers, or computed in this command
with ``--wait`` (no worker needed). ``--list`` prints the study's runs with the labels the
report's meta-evaluation uses (``bertscore (vs reference)``)."""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from config.jobs.enums import JobStatus
from metrics.models import MetricRun
from metrics.reports.selectors import metric_run_labels
from metrics.services.runs import metric_run_create
from metrics.services.worker import metric_run_execute

from .simulate_judges import study_from_arg, validation_message


class Command(BaseCommand):
    help = (
        "Start a metric run over every candidate of a study (queued for the workers, or with --wait computed "
        "here), or --list the study's runs with their labels."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's name or id")
        parser.add_argument("--metric", help="the metric's slug (manage.py metrics lists them)")
        parser.add_argument(
            "--param",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="a metric parameter, e.g. against=reference; repeat for several",
        )
        parser.add_argument("--wait", action="store_true", help="compute the run in this command and print its score")
        parser.add_argument("--list", action="store_true", help="list the study's runs instead")

    def handle(self, *args, **opts):
        study = study_from_arg(opts["study"])
        if opts["list"]:
            return self._list(study)
        if not opts["metric"]:
            raise CommandError("give --metric SLUG (or --list)")
        params = {}
        for item in opts["param"]:
            key, sep, value = item.partition("=")
            if not sep:
                raise CommandError(f"--param {item}: write KEY=VALUE")
            params[key.strip()] = value
        against = params.pop("against", None)
        try:
            run = metric_run_create(
                study=study, metric=opts["metric"], params=params, against=against, enqueue=not opts["wait"]
            )
        except ValidationError as exc:
            raise CommandError(f"no run started: {validation_message(exc)}") from None
        if not opts["wait"]:
            self.stdout.write(
                f"run #{run.pk} of {run.metric} on '{study.name}' is queued ({run.n} candidates); "
                "a worker (make run, make worker) computes it"
            )
            return
        run = metric_run_execute(run_id=run.pk)
        if run.status != JobStatus.SUCCEEDED:
            raise CommandError(f"run #{run.pk} of {run.metric} {run.status}: {run.error}")
        label = metric_run_labels(MetricRun.objects.filter(study=study, metric=run.metric, status=JobStatus.SUCCEEDED))[
            run.pk
        ]
        self.stdout.write(
            f"run #{run.pk} {label}: corpus {run.corpus_score:.4f} over {run.n} candidates\n  {run.signature}"
        )

    def _list(self, study) -> None:
        runs = list(MetricRun.objects.filter(study=study).order_by("metric", "pk"))
        labels = metric_run_labels([r for r in runs if r.status == JobStatus.SUCCEEDED])
        self.stdout.write("run\tlabel\tstatus\tcorpus\tsignature")
        for run in runs:
            score = "" if run.corpus_score is None else f"{run.corpus_score:.4f}"
            self.stdout.write(f"{run.pk}\t{labels.get(run.pk, run.metric)}\t{run.status}\t{score}\t{run.signature}")
