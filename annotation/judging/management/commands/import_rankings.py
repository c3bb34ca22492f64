"""python manage.py import_rankings --study NAME FILE

``import_judgments`` for a ranking study, by the name the docs and scripts know: rankings
collected elsewhere (JSON Lines: judge, original_id, ranking best first with ties as nested
lists, optional scores and seconds), read by the ranking unit. All or nothing; a study of
another protocol is refused."""

from annotation.judging.protocols.ranking.unit import RANKING

from .import_judgments import Command as ImportJudgmentsCommand


class Command(ImportJudgmentsCommand):
    help = (
        "Import rankings collected elsewhere into a ranking study (JSON Lines: judge, original_id, ranking, "
        "optional scores and seconds). All or nothing."
    )
    unit = RANKING
