"""python manage.py import_esa_proposals --study NAME FILE

The spans an ESA study shows pre-filled (its design's pre-fill set to ``imported``): one
candidate per line, keyed by original_id and system as the ESA export keys it, the proposals
in error_spans. A new file replaces the proposals imported before; only before opening. All or
nothing: every problem is listed with its line and column."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.importing.reading import StudyImportError
from annotation.judging.protocols.esa.imports import esa_proposals_import
from annotation.management.studies import study_from_ref


class Command(BaseCommand):
    help = "Import the proposed (pre-filled) spans of an ESA study (JSON Lines). All or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the proposal file (JSON Lines)")
        parser.add_argument("--study", required=True, help="study name")

    def handle(self, *args, **opts):
        path = Path(opts["file"])
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"{path}: cannot read: {exc.strerror}") from None
        study = study_from_ref(opts["study"])
        try:
            s = esa_proposals_import(study=study, data=data, filename=path.name)
        except StudyImportError as exc:
            raise CommandError("import failed, nothing was written:\n" + exc.describe(limit=50)) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {path.name} into '{study.name}': {s.spans:,} proposed spans for {s.candidates:,} candidates"
                + (f" (replacing the proposals of {s.replaced:,})" if s.replaced else "")
                + "."
            )
        )
