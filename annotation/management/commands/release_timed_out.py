from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "Release the unfinished items and the places of join-link participants idle longer than their link's "
        "timeout (their finished work stays). Celery beat does this every PARAEVAL_SEAT_RELEASE_INTERVAL_SECONDS "
        "and a join to a full-looking link does it first; this runs it by hand."
    )

    def handle(self, *args, **opts):
        from annotation.participation.services import participants_release_timed_out

        n = participants_release_timed_out()
        self.stdout.write(f"{n} participant(s) timed out; their unfinished items were released.")
