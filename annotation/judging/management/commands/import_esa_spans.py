"""python manage.py import_esa_spans --study NAME FILE

Error spans collected elsewhere (paraeval's JSON Lines, Appraise's or Pearmut's spans) into an
ESA study: each line one judge's spans and score for one candidate. All or nothing: every
problem is listed with its line and column."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.importing.reading import StudyImportError
from annotation.judging.protocols.esa.imports import esa_judgments_import
from annotation.models import Study


class Command(BaseCommand):
    help = "Import ESA error spans (JSON Lines) into an error span annotation study. All or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the span file (JSON Lines)")
        parser.add_argument("--study", required=True, help="study name")

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
            s = esa_judgments_import(study=study, data=data, filename=path.name)
        except StudyImportError as exc:
            raise CommandError("import failed, nothing was written:\n" + exc.describe(limit=50)) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {path.name} into '{study.name}': {s.rows:,} annotations ({s.revisions:,} revisions) by "
                f"{s.judges} judges ({s.judges_created} new imported participants)"
                + (
                    f"; {s.controls_skipped:,} annotations of paraeval's controls skipped."
                    if s.controls_skipped
                    else "."
                )
            )
        )
