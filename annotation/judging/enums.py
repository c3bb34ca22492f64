"""Choices and fixed vocabularies of judging."""

from django.db import models

from annotation.enums import SystemKind

#: The four PEM criteria (Liu et al. 2010, §5.1), by slug, in presentation order: the
#: default design. A study's own criteria are data (``JudgingDesign.criteria``).
CRITERIA: tuple[str, ...] = ("adequacy", "fluency", "dissimilarity", "overall")
SCORE_MIN, SCORE_MAX = 1, 5

#: The most seconds a judgment's timing may say a person spent on one item (a day): the
#: bound of a submission's ``active_seconds`` and of an imported file's ``seconds``. Far
#: beyond any real judge; small enough that a study's sums stay ordinary numbers (a
#: client's 1.7e308 once overflowed PostgreSQL's sum and broke every page that adds times).
MAX_ITEM_SECONDS = 24 * 60 * 60

#: The key of an :class:`~annotation.models.ImportJob`'s ``summary`` that makes it a judgments
#: import run by a worker (a study's import jobs also carry study files and generated systems);
#: it holds the import's request (its mode).
JUDGMENTS_JOB_KEY = "judgments_import"

#: Control kind (as in judgments frames and metrics.core.controls) ↔ system kind and name.
CONTROL_SYSTEM_KIND = {
    "identical": SystemKind.CONTROL_IDENTICAL,
    "random": SystemKind.CONTROL_RANDOM,
    "unigram": SystemKind.CONTROL_UNIGRAM,
}
CONTROL_KIND_OF_SYSTEM_KIND = {v.value: k for k, v in CONTROL_SYSTEM_KIND.items()}
CONTROL_SYSTEM_PREFIX = "control:"


def control_system_name(kind: str, copy: int = 1) -> str:
    """``control:random`` for the first copy, ``control:random:2`` for the second, …"""
    return f"{CONTROL_SYSTEM_PREFIX}{kind}" if copy == 1 else f"{CONTROL_SYSTEM_PREFIX}{kind}:{copy}"


class JudgesMode(models.TextChoices):
    FULLY_CROSSED = "crossed", "Every judge rates every item (fully crossed, as in PEM)"
    K_PER_ITEM = "k", "Exactly k judges per item, loads balanced"


class JudgmentSource(models.TextChoices):
    PAGE = "page", "Judge's page"
    API = "api", "API"
    IMPORT = "import", "Imported"


class Protocol(models.TextChoices):
    ABSOLUTE = "absolute", "Absolute: each pair rated on the design's criteria and scales"
    COMPARISON = "comparison", "Side-by-side comparison: which of two candidates is better"
    ESA = "esa", "Error spans (ESA): mark what is wrong, minor or major, then score 0–100"
    RANKING = "ranking", "Ranking: order k candidates of one original at once"


class EsaPrefill(models.TextChoices):
    """Where the spans an ESA judge finds pre-filled come from (Zouhar et al. 2025)."""

    NONE = "none", "No pre-filled spans"
    ALIGNER = "aligner", "paraeval's word aligner: unaligned words as possible additions and omissions"
    IMPORTED = "imported", "An imported file of proposed spans (JSON Lines with character offsets)"


#: The error categories an ESA study offers by default (the judge may leave a span uncategorised).
ESA_DEFAULT_CATEGORIES: tuple[str, ...] = ("meaning changed", "meaning added", "meaning omitted", "fluency")


#: A comparison judgment's answers (per question): the left candidate ("A") better, a tie,
#: or the right one ("B") better. Stored as shown; the item records which system was on
#: which side.
COMPARISON_ANSWERS: tuple[str, ...] = ("A", "tie", "B")
#: The single question of a comparison design that is not per criterion.
COMPARISON_PREFERENCE = "preference"


class ScreenOutRule(models.TextChoices):
    TRAINING = "training", "Failed the training"
    ATTENTION = "attention", "Failed attention checks"
    QC = "qc", "Automatic QC on controls"


class AttentionPolicy(models.TextChoices):
    WARN = "warn", "Warn the judge"
    END = "end", "Screen out after k failures"


class ImportMode(models.TextChoices):
    """What a judgments import does where a (judge, item, criterion) already has a value."""

    REFUSE = "refuse", "Refuse the whole file, naming each row that would change a value"
    ADD = "add", "Add only new values; rows for values already there are skipped (and counted)"
    REPLACE = "replace", "Replace by key: the file's value becomes the latest (earlier ones kept as history)"
