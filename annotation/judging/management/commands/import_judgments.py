"""python manage.py import_judgments --study NAME FILE [--format F] [--mode refuse|add|replace]

Long format (judge, original_id, system/systems/candidate, criterion, value[, seconds])
into a study whose judging design describes the criteria and scales. All or nothing.
``--mode`` says what happens where a judge already has a value for an item and criterion
(a second import, or judgments from the judge's page): refuse the file (default), add only
the new values, or replace by key (the file's value becomes the latest)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.importing.reading import FORMATS, StudyImportError
from annotation.judging.enums import ImportMode
from annotation.judging.services.judgment_import import judgments_import_file
from annotation.models import Study


class Command(BaseCommand):
    help = (
        "Import judgments collected elsewhere into a study (long format CSV, TSV or JSONL: judge, original_id, "
        "system or systems or candidate, criterion, value, optional seconds). All or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the judgments file")
        parser.add_argument("--study", required=True, help="study name")
        parser.add_argument("--format", choices=FORMATS, help="override the format the extension implies")
        parser.add_argument(
            "--mode",
            choices=ImportMode.values,
            default=ImportMode.REFUSE,
            help="where a judge already has a value for an item and criterion: refuse the file "
            "(default), add only new values, or replace (the file's value becomes the latest)",
        )

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
            s = judgments_import_file(study=study, data=data, filename=path.name, fmt=opts["format"], mode=opts["mode"])
        except StudyImportError as exc:
            raise CommandError("import failed, nothing was written:\n" + exc.describe(limit=50)) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {path.name} into '{study.name}': {s.rows:,} rows, {s.judgments:,} judgments "
                f"({s.revisions:,} revisions) by {s.judges} judges ({s.judges_created} new imported participants); "
                f"{s.candidates_created:,} candidates and {s.systems_created} systems added; "
                f"{s.replaced:,} values replaced, {s.skipped:,} skipped as already there (mode {s.mode})"
                + (f"; {s.controls_skipped:,} control rows skipped." if s.controls_skipped else ".")
            )
        )
