"""python manage.py create_researcher NAME_OR_EMAIL [--link] [--base-url URL]"""

from django.core.management.base import BaseCommand

from annotation.services.people import PeopleError, study_people_create

from ._people import refuse, write_people


class Command(BaseCommand):
    help = (
        "Make a researcher account (may create studies and add people to them) and print its generated password "
        "or a single-use sign-in link, once. The way to make the first researcher of an installation."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="username, or an email address (then also the username)")
        parser.add_argument("--link", action="store_true", help="print a personal sign-in link instead of a password")
        parser.add_argument("--base-url", help="where the site is reached (default: PARAEVAL_BASE_URL)")

    def handle(self, *args, **opts):
        try:
            made = study_people_create(
                study=None,
                lines=[(1, opts["name"])],
                role=None,
                researcher=True,
                delivery="link" if opts["link"] else "password",
            )
        except PeopleError as exc:
            raise refuse(exc) from None
        write_people(self.stdout, made, opts["base_url"])
