"""python manage.py import_parabank DIR [--study NAME] [--owner USERNAME]

ParaBank's crowd evaluation (Hu et al., AAAI 2019; ``ref.tsv`` and ``candidates.tsv.xz``
as published in decompositional-semantics-initiative/ParaBank-Eval-Data) as one study:
400 originals, one candidate per original × system, a 0–100 similarity slider and a
0–2 grammaticality scale, 44 crowd workers as imported participants."""

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotation.importing.parabank import PARABANK_CRITERIA, parabank_files
from annotation.importing.reading import StudyImportError
from annotation.importing.studies import parse_study_file
from annotation.judging.protocols.absolute.imports import judgments_import_file
from annotation.judging.services.design import design_update
from annotation.models import Study
from annotation.services.imports import study_import_parsed
from annotation.services.studies import study_create


class Command(BaseCommand):
    help = "Import ParaBank's human evaluation (a directory with ref.tsv and candidates.tsv.xz) as a new study."

    def add_arguments(self, parser):
        parser.add_argument("directory", help="directory holding ref.tsv and candidates.tsv.xz")
        parser.add_argument("--study", default="ParaBank evaluation", help="name of the new study")
        parser.add_argument("--owner", help="owner username (default: the first superuser)")

    def handle(self, *args, **opts):
        if Study.objects.filter(name=opts["study"]).exists():
            raise CommandError(f"a study named '{opts['study']}' exists already; choose another --study")
        owner = (
            User.objects.filter(username=opts["owner"]).first()
            if opts["owner"]
            else User.objects.filter(is_superuser=True).order_by("pk").first()
        )
        if owner is None:
            raise CommandError("the study needs an owner: pass --owner USERNAME or create a superuser")
        try:
            study_file, judgments_file = parabank_files(opts["directory"])
        except (OSError, KeyError, ValueError) as exc:
            raise CommandError(f"cannot read ParaBank's files in {opts['directory']}: {exc}") from None
        try:
            with transaction.atomic():
                study = study_create(
                    name=opts["study"],
                    owner=owner,
                    description="ParaBank's crowd evaluation (Hu, Rudinger, Post & Van Durme, AAAI 2019).",
                )
                design_update(
                    study=study,
                    changes={
                        "criteria": PARABANK_CRITERIA,
                        "control_counts": {"identical": 0, "random": 0, "unigram": 0},
                        "expected_scores": {"identical": {}, "random": {}, "unigram": {}},
                    },
                )
                parsed = parse_study_file(study_file, filename="parabank-study.tsv")
                data = study_import_parsed(study=study, parsed=parsed)
                summary = judgments_import_file(study=study, data=judgments_file, filename="parabank-judgments.tsv")
        except StudyImportError as exc:
            raise CommandError("import failed, nothing was written:\n" + exc.describe(limit=50)) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Study '{study.name}' (id {study.pk}): {data['originals_added']} originals, {data['systems_added']} "
                f"systems, {data['candidates_added']:,} candidates; {summary.judgments:,} judgments "
                f"({summary.revisions:,} revisions) by {summary.judges} judges."
            )
        )
