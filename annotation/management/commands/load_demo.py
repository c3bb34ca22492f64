from django.core.management.base import BaseCommand, CommandError

from annotation.demo import DEMO_ACCOUNTS, demo_load


class Command(BaseCommand):
    help = "Create the demo accounts, the demo study and its small ESA and ranking studies (each once) and print the credentials."

    def add_arguments(self, parser):
        parser.add_argument("--quiet-credentials", action="store_true", help="do not print passwords")

    def handle(self, *args, **opts):
        from django.conf import settings

        if settings.PRODUCTION:
            raise CommandError("refusing to create demo accounts with known passwords in production")
        study, created = demo_load(stdout=self.stdout)
        self.stdout.write(("Loaded" if created else "Already loaded") + f": {study.name}")
        if not opts["quiet_credentials"]:
            self.stdout.write("Demo accounts (username / password):")
            for username, (password, role) in DEMO_ACCOUNTS.items():
                self.stdout.write(f"  {username:<11} {password:<16} {role}")
