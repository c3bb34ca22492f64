from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.backup import BackupError, study_restore


class Command(BaseCommand):
    help = "Restore a study written by backup_study into this installation (all or nothing; never overwrites)."

    def add_arguments(self, parser):
        parser.add_argument("archive", help="a .zip written by backup_study")

    def handle(self, *args, **opts):
        try:
            data = Path(opts["archive"]).read_bytes()
        except OSError as exc:
            raise CommandError(f"{opts['archive']}: {exc.strerror}") from None
        try:
            study = study_restore(archive=data)
        except BackupError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(self.style.SUCCESS(f"restored study '{study.name}'"))
