from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = ("Release the unfinished items of join-link participants idle longer than their link's timeout "
            "(their finished work stays). Joining does this for its study by itself; run this from cron to "
            "keep the participants page's statuses current between arrivals.")

    def handle(self, *args, **opts):
        from annotation.participation.services import participants_release_timed_out

        n = participants_release_timed_out()
        self.stdout.write(f"{n} participant(s) timed out; their unfinished items were released.")
