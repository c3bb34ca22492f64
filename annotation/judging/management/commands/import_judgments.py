"""python manage.py import_judgments --study NAME FILE [--format F] [--mode refuse|add|replace]

Judgments collected elsewhere into a study, in the file format of the study's protocol: the
command asks the study's unit (:meth:`~annotation.judging.protocols.base.JudgingProtocol.judgments_import`),
so a new protocol's format needs no command of its own. All or nothing. For absolute rating,
the long format (judge, original_id, system/systems/candidate, criterion, value[, seconds])
against the criteria and scales of the study's design; ``--mode`` says what happens where a
judge already has a value for an item and criterion (a second import, or judgments from the
judge's page): refuse the file (default), add only the new values, or replace by key (the
file's value becomes the latest). For ESA, a span file; for ranking, a ranking file (JSON
Lines; ``import_esa_spans`` and ``import_rankings`` are this command for those protocols)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.importing.reading import FORMATS, StudyImportError
from annotation.judging.enums import ImportMode
from annotation.judging.protocols.base import JudgingProtocol
from annotation.judging.protocols.registry import protocol_for_study
from annotation.management.studies import study_from_ref


class Command(BaseCommand):
    help = (
        "Import judgments collected elsewhere into a study, in its protocol's format (absolute rating: long format "
        "CSV, TSV or JSONL: judge, original_id, system or systems or candidate, criterion, value, optional seconds; "
        "ESA: a span file; ranking: a ranking file). All or nothing."
    )
    #: The protocol whose file this command reads; None: the study's own (asked of the registry).
    unit: JudgingProtocol | None = None

    def add_arguments(self, parser):
        parser.add_argument("file", help="the judgments file")
        parser.add_argument("--study", required=True, help="study name")
        if self.unit is not None:
            return  # a protocol's own command: its file is JSON Lines, revised by key
        parser.add_argument("--format", choices=FORMATS, help="override the format the extension implies")
        parser.add_argument(
            "--mode",
            choices=ImportMode.values,
            help="absolute rating: where a judge already has a value for an item and criterion: refuse the file "
            "(default), add only new values, or replace (the file's value becomes the latest)",
        )

    def handle(self, *args, **opts):
        path = Path(opts["file"])
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"{path}: cannot read: {exc.strerror}") from None
        study = study_from_ref(opts["study"])
        unit = self.unit or protocol_for_study(study=study)
        try:
            summary = unit.judgments_import(
                study=study, data=data, filename=path.name, fmt=opts.get("format"), mode=opts.get("mode")
            )
        except StudyImportError as exc:
            raise CommandError("import failed, nothing was written:\n" + exc.describe(limit=50)) from None
        self.stdout.write(self.style.SUCCESS(f"Imported {path.name} into '{study.name}': {summary.describe()}"))
