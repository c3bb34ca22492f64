import importlib
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError

#: (module, function, what it resends) — every kind of worker-run job paraeval has.
REQUEUERS = (
    ("annotation.services", "jobs_requeue_stale", "import/generation job(s)"),
    ("annotation.alignment.services", "jobs_requeue_stale", "alignment scoring/aligner run(s)"),
    ("metrics.services", "metric_runs_requeue_stale", "metric run(s)"),
    ("metrics.reports.services", "reports_requeue_stale", "report(s)"),
)


class Command(BaseCommand):
    help = ("Send queued background work to the broker again (after a broker outage): imports, alignment runs, "
            "metric runs and reports; and work stuck 'running' because its worker died. Safe to run any time "
            "(every task is idempotent), e.g. from cron every few minutes.")

    def add_arguments(self, parser):
        parser.add_argument("--stale-minutes", type=float, default=30,
                            help="also resend running jobs not updated for this many minutes (0: queued jobs only; "
                                 "default 30)")

    def handle(self, *args, **opts):
        if opts["stale_minutes"] < 0:
            raise CommandError("--stale-minutes must not be negative")
        stale = timedelta(minutes=opts["stale_minutes"]) if opts["stale_minutes"] else None
        for module, func, what in REQUEUERS:
            n = getattr(importlib.import_module(module), func)(stale_after=stale)
            self.stdout.write(f"requeued {n} {what}")
