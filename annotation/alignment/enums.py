"""Choices of the alignment app."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class AlignmentSystemKind(models.TextChoices):
    """Where a system's alignments come from."""

    ALIGNER = "aligner", "Automatic: paraeval's monolingual aligner"
    PIVOT = "pivot", "Automatic: pivot (shared Strong's numbers)"
    IMPORTED = "imported", "Imported from an external aligner"


class AssignmentStatus(models.TextChoices):
    # Annotators see these labels (their task list, the grid's badge): translated.
    ASSIGNED = "assigned", _("Not started")
    IN_PROGRESS = "in_progress", _("Draft saved")
    SUBMITTED = "submitted", _("Submitted")


class ScoringKind(models.TextChoices):
    SYSTEM = "system", "A system alignment against the gold"
    PARAPHRASES = "paraphrases", "A paraphrase table against the gold's reference paraphrases"
    AGREEMENT = "agreement", "Agreement between annotators"


#: Alignment file formats (metrics.core.alignment.FORMATS), with their file extensions.
ALIGNMENT_FORMATS = {
    "pharaoh": ("Pharaoh (i-j sure, ipj possible, 0-based)", "txt"),
    "naacl": ("NAACL (sent i j S|P, 1-based)", "naacl"),
    "json": ("JSON (tokens and links)", "json"),
    "jsonl": ("JSON Lines (tokens and links)", "jsonl"),
    "csv": ("CSV (pair,i,j,kind)", "csv"),
}
