"""python manage.py import_rankings --study NAME FILE

Rankings collected elsewhere (JSON Lines: judge, original_id, ranking best first with ties
as nested lists, optional scores and seconds) into a ranking study. All or nothing."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.importing.reading import StudyImportError
from annotation.judging.protocols.ranking.importing import rankings_import_file
from annotation.models import Study


class Command(BaseCommand):
    help = (
        "Import rankings collected elsewhere into a ranking study (JSON Lines: judge, original_id, ranking, "
        "optional scores and seconds). All or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the rankings file (.jsonl)")
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
            s = rankings_import_file(study=study, data=data, filename=path.name)
        except StudyImportError as exc:
            raise CommandError("import failed, nothing was written:\n" + exc.describe(limit=50)) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {path.name} into '{study.name}': {s.rows:,} lines, {s.rankings:,} rankings "
                f"({s.revisions:,} revisions) by {s.judges} judges ({s.judges_created} new imported participants)."
            )
        )
