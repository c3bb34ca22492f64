from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = (
        "Send queued background work to the broker again (after a broker outage): imports, alignment runs, "
        "metric runs and reports; and work stuck 'running' because its worker died. Workers do this by "
        "themselves (Celery beat runs the same pass every PARAEVAL_REQUEUE_INTERVAL_SECONDS); this command "
        "is for doing it now. Safe to run any time: a resent job runs only if no live worker holds it."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--stale-minutes",
            type=float,
            default=None,
            help="also resend running jobs without a heartbeat for this many minutes (0: queued "
            "jobs only; default PARAEVAL_REQUEUE_STALE_SECONDS, "
            f"now {settings.PARAEVAL_REQUEUE_STALE_SECONDS / 60:g})",
        )

    def handle(self, *args, **opts):
        from config.recovery import requeue_jobs, stale_after_default

        minutes = opts["stale_minutes"]
        if minutes is not None and minutes < 0:
            raise CommandError("--stale-minutes must not be negative")
        stale: timedelta | None
        if minutes is None:
            stale = stale_after_default()
        else:
            stale = timedelta(minutes=minutes) if minutes else None
        for n, what in requeue_jobs(stale_after=stale):
            self.stdout.write(f"requeued {n} {what}")
