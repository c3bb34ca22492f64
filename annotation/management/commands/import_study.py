"""python manage.py import_study --study NAME FILE [--format F] [--replace] [--create]"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation import services
from annotation.importing import FORMATS, StudyImportError
from annotation.models import Study


class Command(BaseCommand):
    help = "Import originals and candidates into a study (CSV, TSV or JSONL; long or wide). All or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the data file")
        parser.add_argument("--study", required=True, help="study name")
        parser.add_argument("--format", choices=FORMATS, help="override the format the extension implies")
        parser.add_argument("--replace", action="store_true", help="delete the study's imported data first")
        parser.add_argument("--create", action="store_true", help="create the study if it does not exist")
        parser.add_argument("--owner", help="owner username when creating (default: the first superuser)")

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
            from django.contrib.auth.models import User

            owner = (User.objects.filter(username=opts["owner"]).first() if opts["owner"]
                     else User.objects.filter(is_superuser=True).order_by("pk").first())
            if owner is None:
                raise CommandError("--create needs an owner: pass --owner USERNAME or create a superuser")
            study = services.study_create(name=opts["study"], owner=owner)
        try:
            job = services.study_import_file(
                study=study, data=data, filename=path.name, fmt=opts["format"], replace=opts["replace"],
                background=False)
        except StudyImportError as exc:
            raise CommandError("import failed, nothing was written:\n" + exc.describe(limit=50)) from None
        s = job.summary
        self.stdout.write(self.style.SUCCESS(
            f"Imported {path.name} into '{study.name}' ({s['layout']} {s['format']}, {s['rows']} rows): "
            f"{s['originals_added']} originals, {s['systems_added']} systems, {s['candidates_added']} candidates."))
