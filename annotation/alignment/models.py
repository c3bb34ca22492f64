"""Word alignment: tasks (pairs in groups), systems, annotators' work, scoring runs.

Links are stored as JSON lists of ``[i, j]`` (0-based token indices), sure and
possible kept disjoint as in :class:`metrics.core.alignment.Alignment`; the
selectors turn rows into ``Alignment`` values, so no other code reads the JSON.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from annotation.models import Study, TimeStampedModel
from config.jobs.models import BackgroundJob

from .enums import AlignmentSystemKind, AssignmentStatus, ScoringKind

#: The largest sentence the grid accepts, in tokens (a 200 × 200 grid is 40,000 cells).
MAX_TOKENS = 200


def _validate_tokens(value) -> None:
    if not isinstance(value, list) or not value:
        raise ValidationError("tokens must be a non-empty list")
    if len(value) > MAX_TOKENS:
        raise ValidationError(f"a sentence may have at most {MAX_TOKENS} tokens, this one has {len(value)}")
    for t in value:
        if not isinstance(t, str) or not t or any(ch.isspace() for ch in t):
            raise ValidationError(f"token {t!r} is not a non-empty string without spaces")


def _validate_links(value) -> None:
    if not isinstance(value, list):
        raise ValidationError("links must be a list of [i, j]")
    for link in value:
        if (
            not isinstance(link, list)
            or len(link) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in link)
        ):
            raise ValidationError(f"link {link!r} is not [i, j] with non-negative integers")


def links_json(links: Iterable[tuple[int, int]]) -> list[list[int]]:
    """``(i, j)`` links as the sorted ``[[i, j], ...]`` list the ``sure`` and ``possible`` fields store."""
    return [[i, j] for i, j in sorted(links)]


class LinksMixin(models.Model):
    """Sure and possible links over a pair's grid, disjoint, sorted."""

    sure = models.JSONField(default=list, blank=True, validators=[_validate_links])
    possible = models.JSONField(default=list, blank=True, validators=[_validate_links])

    class Meta:
        abstract = True

    def links_fit(self, pair: AlignmentPair) -> None:
        """Raise ``ValidationError`` unless every link lies inside ``pair``'s grid and the sets are disjoint."""
        n1, n2 = len(pair.tokens1), len(pair.tokens2)
        sure = {tuple(x) for x in self.sure}
        possible = {tuple(x) for x in self.possible}
        for i, j in sure | possible:
            if i >= n1 or j >= n2:
                raise ValidationError(f"link {i}-{j} lies outside the {n1}×{n2} grid of this pair")
        if sure & possible:
            i, j = sorted(sure & possible)[0]
            raise ValidationError(f"link {i}-{j} is both sure and possible")


class AlignmentConfig(TimeStampedModel):
    """A study's alignment settings."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="alignment_config")
    annotators_per_pair = models.PositiveSmallIntegerField(
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(20)],
        help_text="How many annotators align each pair (k).",
    )
    prefill_system = models.ForeignKey(
        "AlignmentSystem",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The automatic alignment that pre-fills annotators' grids (and 'Reset to automatic').",
    )

    def __str__(self) -> str:
        return f"alignment settings of {self.study}"


class AlignmentGroup(TimeStampedModel):
    """A key sentence aligned against one or more others (ParaMetric's 1–2 … 1–11).

    Plain pairs form groups of one. Every pair of a group shares sentence 1.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="alignment_groups")
    external_id = models.CharField(max_length=200)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["study", "position"]
        constraints = [models.UniqueConstraint(fields=["study", "external_id"], name="uniq_alignment_group_id")]

    def __str__(self) -> str:
        return self.external_id


class AlignmentPair(TimeStampedModel):
    """One alignment task: two sentences and their tokens (``metrics.core.text.tokenize``).

    ``position`` orders the study's pairs; line k of a Pharaoh file is the pair at
    the k-th position.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="alignment_pairs")
    group = models.ForeignKey(AlignmentGroup, on_delete=models.CASCADE, related_name="pairs")
    external_id = models.CharField(max_length=200)
    position = models.PositiveIntegerField()
    text1 = models.TextField()
    text2 = models.TextField()
    tokens1 = models.JSONField(validators=[_validate_tokens])
    tokens2 = models.JSONField(validators=[_validate_tokens])

    class Meta:
        ordering = ["study", "position"]
        constraints = [
            models.UniqueConstraint(fields=["study", "external_id"], name="uniq_alignment_pair_id"),
            models.UniqueConstraint(fields=["study", "position"], name="uniq_alignment_pair_position"),
        ]

    def __str__(self) -> str:
        return self.external_id

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.tokens1), len(self.tokens2)


class AlignmentSystem(TimeStampedModel):
    """Where automatic alignments come from (an aligner, the pivot, an import)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="alignment_systems")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=AlignmentSystemKind.choices, default=AlignmentSystemKind.IMPORTED)
    description = models.TextField(blank=True)
    parameters = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["study", "name"]
        constraints = [models.UniqueConstraint(fields=["study", "name"], name="uniq_alignment_system_name")]

    def __str__(self) -> str:
        return self.name


class SystemAlignment(LinksMixin, TimeStampedModel):
    """One system's alignment of one pair."""

    system = models.ForeignKey(AlignmentSystem, on_delete=models.CASCADE, related_name="alignments")
    pair = models.ForeignKey(AlignmentPair, on_delete=models.CASCADE, related_name="system_alignments")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["system", "pair"], name="uniq_system_alignment")]


class AlignmentAssignment(LinksMixin, TimeStampedModel):
    """One annotator's work on one pair: the draft while editing, the gold once submitted.

    ``revision`` goes up with every save so that a stale browser tab cannot
    overwrite newer work. Timing: ``active_seconds`` is what the page measured
    while visible and in use; ``opened_at``/``submitted_at`` are server clock,
    and ``server_seconds`` the wall time between them.
    """

    pair = models.ForeignKey(AlignmentPair, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="alignment_assignments"
    )
    status = models.CharField(max_length=16, choices=AssignmentStatus.choices, default=AssignmentStatus.ASSIGNED)
    revision = models.PositiveIntegerField(default=0)
    prefill_system = models.ForeignKey(
        AlignmentSystem, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    active_seconds = models.FloatField(default=0.0)
    opened_at = models.DateTimeField(null=True, blank=True)
    draft_saved_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    server_seconds = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["pair__position", "annotator_id"]
        constraints = [models.UniqueConstraint(fields=["pair", "annotator"], name="uniq_alignment_assignment")]
        indexes = [models.Index(fields=["annotator", "status"], name="alignment_assign_user_status")]

    def __str__(self) -> str:
        return f"{self.annotator} on {self.pair}"

    @property
    def is_submitted(self) -> bool:
        return self.status == AssignmentStatus.SUBMITTED


class ScoringRun(BackgroundJob):
    """A scoring job run by a Celery worker; its results stay here."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="alignment_scoring_runs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    kind = models.CharField(max_length=16, choices=ScoringKind.choices)
    system = models.ForeignKey(
        AlignmentSystem, on_delete=models.SET_NULL, null=True, blank=True, related_name="scoring_runs"
    )
    label = models.CharField(max_length=255, help_text="What was scored: the system name or the table's file name.")
    #: Only runs queued before the table travelled in ``table_data``; new runs leave it empty.
    table_file = models.FileField(upload_to="alignment/tables/%Y/%m/", blank=True)
    #: The uploaded paraphrase table while the run waits for a worker: in the database, so that a worker
    #: on any machine reads it. Emptied when the run ends; at most PARAEVAL_IMPORT_MAX_BYTES.
    table_data = models.BinaryField(blank=True, default=b"", editable=False)
    parameters = models.JSONField(default=dict, blank=True)
    results = models.JSONField(default=dict, blank=True)
    signature = models.CharField(max_length=255, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.label}"


class AlignerRun(BackgroundJob):
    """paraeval's aligner run over every pair of a study by a Celery worker; writes one system."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="aligner_runs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    system_name = models.CharField(max_length=200)
    parameters = models.JSONField(default=dict, blank=True)
    system = models.ForeignKey(AlignmentSystem, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"aligner run → {self.system_name}"
