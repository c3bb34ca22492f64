"""python manage.py import_study --study NAME FILE [--format F] [--replace] [--create]"""

from pathlib import Path

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from annotation.importing.reading import FORMATS, StudyImportError
from annotation.models import Study
from annotation.selectors import researcher_accounts
from annotation.services.queueing import study_import_file
from annotation.services.studies import study_create


class Command(BaseCommand):
    help = "Import originals and candidates into a study (CSV, TSV or JSONL; long or wide). All or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the data file")
        parser.add_argument("--study", required=True, help="study name")
        parser.add_argument("--format", choices=FORMATS, help="override the format the extension implies")
        parser.add_argument("--replace", action="store_true", help="delete the study's imported data first")
        parser.add_argument("--create", action="store_true", help="create the study if it does not exist")
        parser.add_argument("--owner", help="owner username when creating (default: the only researcher account)")

    def handle(self, *args, **opts):
        path = Path(opts["file"])
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"{path}: cannot read: {exc.strerror}") from None
        study = Study.objects.filter(name=opts["study"]).first()
        if study is None:
            if not opts["create"]:
                raise CommandError(f"no study named '{opts['study']}' (pass --create to create it)")
            study = study_create(name=opts["study"], owner=self._owner(opts["owner"]))
        try:
            job = study_import_file(
                study=study,
                data=data,
                filename=path.name,
                fmt=opts["format"],
                replace=opts["replace"],
                background=False,
            )
        except StudyImportError as exc:
            raise CommandError("import failed, nothing was written:\n" + exc.describe(limit=50)) from None
        s = job.summary
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {path.name} into '{study.name}' ({s['layout']} {s['format']}, {s['rows']} rows): "
                f"{s['originals_added']} originals, {s['systems_added']} systems, {s['candidates_added']} candidates."
            )
        )

    @staticmethod
    def _owner(username: str | None) -> User:
        """``--owner``, else the one researcher account; with none or several, say what to do."""
        if username:
            owner = User.objects.filter(username=username, is_active=True).first()
            if owner is None:
                raise CommandError(f"--owner: no active account named '{username}'")
            return owner
        researchers = list(researcher_accounts()[:6])
        if len(researchers) == 1:
            return researchers[0]
        if not researchers:
            raise CommandError(
                "--create needs an owner and there is no researcher account yet: "
                "make one with `manage.py create_researcher NAME`, or pass --owner USERNAME"
            )
        names = ", ".join(u.username for u in researchers[:5]) + (", ..." if len(researchers) > 5 else "")
        raise CommandError(f"--create needs an owner: there are several researchers ({names}); pass --owner USERNAME")
