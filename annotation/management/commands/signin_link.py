"""python manage.py signin_link USERNAME [--base-url URL]"""

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from annotation.services.signin import signin_link_create

from ._people import signin_url


class Command(BaseCommand):
    help = "Print a new single-use sign-in link for an existing account (e.g. a lost password), once."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--base-url", help="where the site is reached (default: PARAEVAL_BASE_URL)")

    def handle(self, *args, **opts):
        user = User.objects.filter(username=opts["username"], is_active=True).first()
        if user is None:
            raise CommandError(f"no active user named '{opts['username']}'")
        self.stdout.write(signin_url(signin_link_create(user=user), opts["base_url"]))
