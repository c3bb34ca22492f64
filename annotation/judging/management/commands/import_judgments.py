"""python manage.py import_judgments --study NAME FILE [--format F]

Long format (judge, original_id, system/systems/candidate, criterion, value[, seconds])
into a study whose judging design describes the criteria and scales. All or nothing."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.importing import FORMATS, StudyImportError
from annotation.judging import services
from annotation.models import Study


class Command(BaseCommand):
    help = ("Import judgments collected elsewhere into a study (long format CSV, TSV or JSONL: judge, original_id, "
            "system or systems or candidate, criterion, value, optional seconds). All or nothing.")

    def add_arguments(self, parser):
        parser.add_argument("file", help="the judgments file")
        parser.add_argument("--study", required=True, help="study name")
        parser.add_argument("--format", choices=FORMATS, help="override the format the extension implies")

    def handle(self, *args, **opts):
        path = Path(opts["file"])
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"{path}: cannot read: {exc.strerror}") from None
        study = Study.objects.filter(name=opts["study"]).first()
        if study is None:
            raise CommandError(f"no study named '{opts['study']}'")
        try:
            s = services.judgments_import_file(study=study, data=data, filename=path.name, fmt=opts["format"])
        except StudyImportError as exc:
            raise CommandError("import failed, nothing was written:\n" + exc.describe(limit=50)) from None
        self.stdout.write(self.style.SUCCESS(
            f"Imported {path.name} into '{study.name}': {s.rows:,} rows, {s.judgments:,} judgments "
            f"({s.revisions:,} revisions) by {s.judges} judges ({s.judges_created} new imported participants); "
            f"{s.candidates_created:,} candidates and {s.systems_created} systems added."))
