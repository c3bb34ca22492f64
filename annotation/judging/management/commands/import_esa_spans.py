"""python manage.py import_esa_spans --study NAME FILE

``import_judgments`` for an ESA study, by the name the docs and scripts know: error spans
collected elsewhere (paraeval's JSON Lines, Appraise's or Pearmut's spans), each line one
judge's spans and score for one candidate, read by the ESA unit. All or nothing: every problem
is listed with its line and column; a study of another protocol is refused."""

from annotation.judging.protocols.esa.unit import ESA

from .import_judgments import Command as ImportJudgmentsCommand


class Command(ImportJudgmentsCommand):
    help = "Import ESA error spans (JSON Lines) into an error span annotation study. All or nothing."
    unit = ESA
