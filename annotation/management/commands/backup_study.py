from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.backup import study_backup
from annotation.models import Study


class Command(BaseCommand):
    help = "Write a study and everything that depends on it (judgments, alignments, runs, reports, accounts) to a ZIP file."

    def add_arguments(self, parser):
        parser.add_argument("study", help="study name")
        parser.add_argument("--out", required=True, help="archive to write (.zip)")

    def handle(self, *args, **opts):
        study = Study.objects.filter(name=opts["study"]).first()
        if study is None:
            raise CommandError(f"no study named '{opts['study']}'")
        data = study_backup(study=study)
        Path(opts["out"]).write_bytes(data)
        self.stdout.write(self.style.SUCCESS(f"wrote {opts['out']} ({len(data):,} bytes)"))
