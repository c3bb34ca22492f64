"""python manage.py add_participants STUDY --role judge|annotator [--new [--link]] [--file F | NAME ...]"""

from django.core.management.base import BaseCommand, CommandError

from annotation.management.studies import study_from_ref
from annotation.services.people import PARTICIPANT_ROLES, PeopleError, study_people_add_existing, study_people_create

from ._people import read_names, refuse, write_people


class Command(BaseCommand):
    help = (
        "Add judges or annotators to a study, all or none: existing accounts by username, or (--new) new accounts "
        "from names or email addresses, each printed once with a generated password or (--link) a sign-in link."
    )

    def create_parser(self, prog_name, subcommand, **kwargs):
        """Names may come before or after the options (`12 --role judge --new --link c@lab.org d@lab.org`):
        argparse's intermixed parsing, since plain parsing ends the names at the first option."""
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.parse_args = parser.parse_intermixed_args  # type: ignore[method-assign]  # Django calls parse_args
        return parser

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's name or id")
        parser.add_argument("names", nargs="*", help="usernames (or, with --new, names or email addresses)")
        parser.add_argument("--role", required=True, choices=PARTICIPANT_ROLES)
        parser.add_argument("--file", help="read the names from this file, one per line ('-': standard input)")
        parser.add_argument("--new", action="store_true", help="make new accounts instead of adding existing ones")
        parser.add_argument(
            "--link", action="store_true", help="with --new: a sign-in link for each instead of a password"
        )
        parser.add_argument("--base-url", help="where the site is reached (default: PARAEVAL_BASE_URL)")

    def handle(self, *args, **opts):
        study = study_from_ref(opts["study"])
        if opts["link"] and not opts["new"]:
            raise CommandError("--link makes new accounts: pass --new too")
        lines = read_names(opts["names"], opts["file"])
        if not lines:
            raise CommandError("give the names on the command line or with --file")
        try:
            if opts["new"]:
                made = study_people_create(
                    study=study, lines=lines, role=opts["role"], delivery="link" if opts["link"] else "password"
                )
            else:
                users = study_people_add_existing(study=study, usernames=lines, role=opts["role"])
        except PeopleError as exc:
            raise refuse(exc) from None
        if opts["new"]:
            write_people(self.stdout, made, opts["base_url"])
        else:
            self.stdout.write(
                self.style.SUCCESS(
                    f"{len(users)} {opts['role']}(s) added to '{study.name}': {', '.join(u.username for u in users)}"
                )
            )
