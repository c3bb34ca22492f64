"""Write a study's judgments as tidy or wide CSV (the same files as the progress page's buttons)."""

from django.core.management.base import BaseCommand

from annotation.judging.exports import csv_lines
from annotation.judging.selectors.export_rows import export_tidy_rows, export_wide_rows
from annotation.management.studies import study_from_ref


class Command(BaseCommand):
    help = "Export a study's judgments (latest revisions) as tidy or wide CSV."

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True, help="study name or id")
        parser.add_argument("--format", choices=["tidy", "wide"], default="tidy")
        parser.add_argument("-o", "--output", help="file to write (default: standard output)")

    def handle(self, *args, **opts):
        study = study_from_ref(opts["study"])
        rows = export_tidy_rows(study=study) if opts["format"] == "tidy" else export_wide_rows(study=study)
        if opts["output"]:
            with open(opts["output"], "w", encoding="utf-8", newline="") as fh:
                n = sum(fh.write(line) >= 0 for line in csv_lines(rows)) - 1
            self.stderr.write(f"{n} rows written to {opts['output']}")
        else:
            for line in csv_lines(rows):
                self.stdout.write(line, ending="")
