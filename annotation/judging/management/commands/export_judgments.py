"""Write a study's judgments as tidy or wide CSV (the same files as the progress page's buttons)."""

from django.core.management.base import BaseCommand, CommandError

from annotation.judging.exports import csv_lines
from annotation.judging.selectors.export_rows import export_tidy_rows, export_wide_rows
from annotation.models import Study


class Command(BaseCommand):
    help = "Export a study's judgments (latest revisions) as tidy or wide CSV."

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True, help="study name or id")
        parser.add_argument("--format", choices=["tidy", "wide"], default="tidy")
        parser.add_argument("-o", "--output", help="file to write (default: standard output)")

    def handle(self, *args, **opts):
        ref = opts["study"]
        study = Study.objects.filter(name=ref).first() or (
            Study.objects.filter(pk=int(ref)).first() if ref.isdigit() else None
        )
        if study is None:
            raise CommandError(f"no study named or numbered {ref!r}")
        rows = export_tidy_rows(study=study) if opts["format"] == "tidy" else export_wide_rows(study=study)
        if opts["output"]:
            with open(opts["output"], "w", encoding="utf-8", newline="") as fh:
                n = sum(fh.write(line) >= 0 for line in csv_lines(rows)) - 1
            self.stderr.write(f"{n} rows written to {opts['output']}")
        else:
            for line in csv_lines(rows):
                self.stdout.write(line, ending="")
