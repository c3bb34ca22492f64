"""Judging: a study's design, judges' assignments, their judgments, and exclusions.

An *item* is one candidate as presented to one judge: an ``AssignmentItem`` row,
addressed in URLs and JSON only by its random ``token`` (never by a database id),
so nothing a judge's browser receives identifies the candidate, its system or
whether it is a control.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from annotation.models import Candidate, Original, Study, TimeStampedModel
from config.jobs.models import BackgroundJob
from metrics.core.controls import CONTROL_KINDS

from . import defaults, scales
from .enums import AttentionPolicy, EsaPrefill, JudgesMode, JudgmentSource, Protocol, ScreenOutRule

MAX_CONTROLS_PER_KIND = 5


class JudgingDesign(TimeStampedModel):
    """How a study is judged. Frozen (except expected scores and α) once opened."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="judging_design")
    criteria = models.JSONField(
        default=defaults.default_criteria,
        help_text="1–8 criteria: slug, name, help text and scale (points, slider or categorical; see scales.py).",
    )
    judges_mode = models.CharField(max_length=16, choices=JudgesMode.choices, default=JudgesMode.FULLY_CROSSED)
    judges_per_item = models.PositiveSmallIntegerField(
        default=2, validators=[MinValueValidator(1)], help_text="Used when the mode is 'exactly k judges per item'."
    )
    control_counts = models.JSONField(
        default=defaults.default_control_counts, help_text="Controls of each kind per original (0 = none)."
    )
    expected_scores = models.JSONField(
        default=defaults.default_expected_scores,
        help_text="Expected value per control kind and criterion, on that criterion's scale (missing/null: unknown).",
    )
    seed = models.BigIntegerField(default=defaults.new_seed, validators=[MinValueValidator(0)])
    qc_alpha = models.FloatField(
        default=0.05,
        validators=[MinValueValidator(0.0001), MaxValueValidator(0.5)],
        help_text="Significance level of the judge quality-control tests.",
    )
    show_context = models.BooleanField(
        default=False, help_text="Show judges the previous and next sentences of the original's document."
    )
    protocol = models.CharField(
        max_length=16,
        choices=Protocol.choices,
        default=Protocol.ABSOLUTE,
        help_text="Absolute ratings of each pair, or side-by-side comparison of two candidates.",
    )
    comparison_per_criterion = models.BooleanField(
        default=False, help_text="Comparison: ask 'which is better' once per criterion instead of once overall."
    )
    pairs_per_original = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Comparison: system pairs shown per original (empty: every pair), balanced over system pairs.",
    )
    esa_categories = models.JSONField(
        default=defaults.default_esa_categories,
        blank=True,
        help_text="ESA: the error categories a judge may give a span (empty: severity only).",
    )
    esa_prefill = models.CharField(
        max_length=16,
        choices=EsaPrefill.choices,
        default=EsaPrefill.NONE,
        help_text="ESA: where the spans shown pre-filled before the judge starts come from.",
    )
    ranking_k = models.PositiveSmallIntegerField(
        default=4,
        validators=[MinValueValidator(2), MaxValueValidator(6)],
        help_text="Ranking: candidates of one original ranked at once (3–6 in practice).",
    )
    ranking_scores = models.BooleanField(
        default=False, help_text="Ranking: also ask a 0–100 score for each ranked candidate."
    )
    opened_at = models.DateTimeField(null=True, blank=True)
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(qc_alpha__gt=0) & Q(qc_alpha__lt=1), name="judging_design_alpha_range"),
        ]

    def __str__(self) -> str:
        return f"Judging design of {self.study}"

    @property
    def is_frozen(self) -> bool:
        return self.opened_at is not None

    def criterion(self, slug: str) -> dict:
        return next(c for c in self.criteria if c["slug"] == slug)

    @property
    def criterion_slugs(self) -> list[str]:
        return [c["slug"] for c in self.criteria]

    def clean(self) -> None:
        errors: dict[str, list[str]] = {}
        self.criteria = scales.criteria_normalise(self.criteria)
        crit_errors = scales.criteria_errors(self.criteria)
        if crit_errors:
            errors["criteria"] = crit_errors
        counts = self.control_counts
        if not isinstance(counts, dict) or set(counts) - set(CONTROL_KINDS):
            errors.setdefault("control_counts", []).append(f"control counts are per kind: {', '.join(CONTROL_KINDS)}")
        else:
            for kind, n in counts.items():
                if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_CONTROLS_PER_KIND:
                    errors.setdefault("control_counts", []).append(
                        f"the number of '{kind}' controls per original must be a whole number from 0 to {MAX_CONTROLS_PER_KIND}"
                    )
        exp = self.expected_scores
        if not isinstance(exp, dict) or set(exp) != set(CONTROL_KINDS):
            errors.setdefault("expected_scores", []).append(
                f"expected scores are needed for {', '.join(CONTROL_KINDS)}"
            )
        elif not crit_errors:
            by_slug = {c["slug"]: c["scale"] for c in self.criteria}
            for kind, values in exp.items():
                if not isinstance(values, dict):
                    errors.setdefault("expected_scores", []).append(
                        f"expected scores of '{kind}' controls map criteria to values"
                    )
                    continue
                for slug, v in values.items():
                    if slug not in by_slug:
                        errors.setdefault("expected_scores", []).append(
                            f"expected scores of '{kind}' controls name an unknown criterion '{slug}'"
                        )
                    elif v is not None:
                        # None (or a missing criterion): the expected value is unknown, so these
                        # controls are judged on this criterion but not scored against anything.
                        try:
                            ok = scales.value_clean(by_slug[slug], v) == v and not isinstance(v, str)
                        except ValueError:
                            ok = False
                        if not ok:
                            errors.setdefault("expected_scores", []).append(
                                f"the expected {slug} of '{kind}' controls must be "
                                f"{scales.scale_describe(by_slug[slug])}, or empty when unknown"
                            )
        cats = self.esa_categories
        if (
            not isinstance(cats, list)
            or len(cats) > 12
            or any(not isinstance(c, str) or not c.strip() or len(c) > 60 for c in cats)
            or len(set(cats)) != len(cats)
        ):
            errors.setdefault("esa_categories", []).append(
                "give at most 12 different error categories, each 1–60 characters"
            )
        if self.judges_mode == JudgesMode.K_PER_ITEM and not self.judges_per_item:
            errors.setdefault("judges_per_item", []).append("give the number of judges per item")
        if errors:
            raise ValidationError(errors)


class Assignment(TimeStampedModel):
    """One judge's ordered list of items in one study, and the seed that ordered it."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="judging_assignments")
    judge = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="judging_assignments")
    seed = models.BigIntegerField(help_text="The per-judge seed the order was drawn from.")
    n_items = models.PositiveIntegerField(default=0)
    joined_late = models.BooleanField(default=False, help_text="Built after the study was opened.")
    instructions_seen_at = models.DateTimeField(null=True, blank=True)
    # Training and screening (annotation/judging/training.py, screening.py).
    training_passed_at = models.DateTimeField(null=True, blank=True)
    screened_out_at = models.DateTimeField(
        null=True, blank=True, help_text="When a screening rule ended this judge's work; their judgments never count."
    )
    screened_out_rule = models.CharField(max_length=16, choices=ScreenOutRule.choices, blank=True)
    screened_out_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["study", "judge__username"]
        constraints = [models.UniqueConstraint(fields=["study", "judge"], name="judging_uniq_assignment")]

    def __str__(self) -> str:
        return f"{self.judge} in {self.study}"


class AssignmentItem(TimeStampedModel):
    """One candidate in one judge's order, addressed by an opaque random token."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="items")
    # RESTRICT: a candidate someone is assigned to rate cannot silently disappear (the
    # study import's "replace" reports this as work that depends on the data), but it goes
    # with its study when the study itself is deleted (PROTECT blocked that for good).
    candidate = models.ForeignKey(Candidate, on_delete=models.RESTRICT, related_name="judging_items")
    position = models.PositiveIntegerField(help_text="1-based place in the judge's order.")
    token = models.CharField(max_length=32, unique=True)
    done_at = models.DateTimeField(null=True, blank=True, help_text="First submission.")

    class Meta:
        ordering = ["assignment", "position"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "position"], name="judging_uniq_item_position"),
            models.UniqueConstraint(fields=["assignment", "candidate"], name="judging_uniq_item_candidate"),
        ]
        indexes = [
            # "The judge's next item" reads only unrated rows, in order.
            models.Index(
                fields=["assignment", "position"], condition=Q(done_at__isnull=True), name="judging_item_todo"
            ),
            # Progress counts only rated rows (a few thousand of a study's 175,000 at 500 judges):
            # per judge and per item, read from this small index instead of every assigned row.
            models.Index(
                fields=["assignment", "candidate"], condition=Q(done_at__isnull=False), name="judging_item_done"
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.position} of {self.assignment}"


class Judgment(TimeStampedModel):
    """One submission of a value per criterion for one item. Revisions add rows; the latest counts.

    ``values`` maps criterion slug → value on that criterion's scale (int for points and
    categories, int or float for a slider). A judgment from the judge's page or the API
    has every criterion of the design; an imported one may lack some (a missing cell in
    the imported file).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="judgments")
    item = models.ForeignKey(AssignmentItem, on_delete=models.CASCADE, related_name="judgments")
    judge = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="judgments")
    key = models.CharField(max_length=64, help_text="Client-generated idempotency key.")
    revision = models.PositiveIntegerField(default=1)
    is_latest = models.BooleanField(default=True)
    values = models.JSONField(default=dict, help_text="Criterion slug → value on that criterion's scale.")
    served_at = models.DateTimeField(help_text="When the server sent the item to the judge.")
    submitted_at = models.DateTimeField()
    seconds = models.FloatField(
        null=True, blank=True, help_text="Server time from serving to submitting (imported: the file's time, if any)."
    )
    active_seconds = models.FloatField(
        null=True, blank=True, help_text="Time the page was visible and focused (client)."
    )
    source = models.CharField(max_length=8, choices=JudgmentSource.choices, default=JudgmentSource.API)

    class Meta:
        ordering = ["study", "judge", "item", "revision"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "key"], name="judging_uniq_judgment_key"),
            models.UniqueConstraint(fields=["item", "revision"], name="judging_uniq_judgment_revision"),
            models.UniqueConstraint(fields=["item"], condition=Q(is_latest=True), name="judging_one_latest_judgment"),
        ]
        indexes = [models.Index(fields=["study", "is_latest"], name="judging_judgment_latest")]

    def __str__(self) -> str:
        return f"{self.judge} on {self.item_id} (rev. {self.revision})"

    @property
    def scores(self) -> dict[str, int | float]:
        return dict(self.values)


class JudgeExclusion(TimeStampedModel):
    """A researcher's decision to exclude (or re-include) a judge from statistics.

    An event log: the latest row per (study, judge) is the current state, and the
    history shows who decided what, when and why.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="judge_exclusions")
    judge = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    excluded = models.BooleanField()
    reason = models.TextField(blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")

    class Meta:
        ordering = ["study", "judge", "-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.judge} {'excluded from' if self.excluded else 'included in'} {self.study}"


class OpenJob(BackgroundJob):
    """Opening a study's judging in a Celery worker: controls, then one assignment per judge.

    Progress counts judges whose assignment is written (``progress_total`` = judges).
    The study stays a draft (judges see "not started") until the last step marks it
    open, so nobody sees a partial set of assignments. The judges and the items are
    fixed when the worker starts (``judges``, ``items_fingerprint``): a resumed run
    (a requeue after its worker died) writes exactly the assignments the first run
    would have. At most one job per study is queued or running at a time.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="judging_open_jobs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    judges = models.JSONField(default=list, blank=True, help_text="Usernames of the judges assigned (fixed at start).")
    items_fingerprint = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 of the item keys planned at start."
    )
    controls_created = models.PositiveIntegerField(
        null=True, blank=True, help_text="Set once the controls are built (null: not yet)."
    )
    summary = models.JSONField(
        default=dict, blank=True, help_text="controls_created, items, judges, assignment_items once succeeded."
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study"], condition=Q(status__in=["queued", "running"]), name="judging_one_active_open_job"
            ),
        ]

    def __str__(self) -> str:
        return f"Opening judging of {self.study} ({self.status})"


class ComparisonItem(TimeStampedModel):
    """One pair of candidates in one judge's order (comparison protocol), as shown.

    ``left`` is the candidate shown on the left ("A"), ``right`` the one on the right
    ("B"): the side was drawn per judge and item and is recorded here, server-side
    only. Addressed by an opaque random token like :class:`AssignmentItem`.
    """

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="comparison_items")
    left = models.ForeignKey(Candidate, on_delete=models.RESTRICT, related_name="+")
    right = models.ForeignKey(Candidate, on_delete=models.RESTRICT, related_name="+")
    position = models.PositiveIntegerField(help_text="1-based place in the judge's order.")
    token = models.CharField(max_length=32, unique=True)
    is_control = models.BooleanField(default=False, help_text="A control candidate against a genuine one.")
    done_at = models.DateTimeField(null=True, blank=True, help_text="First submission.")

    class Meta:
        ordering = ["assignment", "position"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "position"], name="judging_uniq_cmp_item_position"),
            models.CheckConstraint(condition=~Q(left=models.F("right")), name="judging_cmp_item_two_candidates"),
        ]

    def __str__(self) -> str:
        return f"pair #{self.position} of {self.assignment}"


class ComparisonJudgment(TimeStampedModel):
    """One submission of answers ("A", "tie" or "B" per question) for one pair. Revisions add rows."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="comparison_judgments")
    item = models.ForeignKey(ComparisonItem, on_delete=models.CASCADE, related_name="judgments")
    judge = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="comparison_judgments")
    key = models.CharField(max_length=64, help_text="Client-generated idempotency key.")
    revision = models.PositiveIntegerField(default=1)
    is_latest = models.BooleanField(default=True)
    values = models.JSONField(default=dict, help_text="Question slug → 'A' (left better), 'tie' or 'B' (right better).")
    served_at = models.DateTimeField()
    submitted_at = models.DateTimeField()
    seconds = models.FloatField(null=True, blank=True)
    active_seconds = models.FloatField(null=True, blank=True)
    source = models.CharField(max_length=8, choices=JudgmentSource.choices, default=JudgmentSource.API)

    class Meta:
        ordering = ["study", "judge", "item", "revision"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "key"], name="judging_uniq_cmp_judgment_key"),
            models.UniqueConstraint(fields=["item", "revision"], name="judging_uniq_cmp_judgment_revision"),
            models.UniqueConstraint(
                fields=["item"], condition=Q(is_latest=True), name="judging_one_latest_cmp_judgment"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judge} on pair {self.item_id} (rev. {self.revision})"


class ScreeningSettings(TimeStampedModel):
    """A study's training pass rule, attention checks and automatic QC screen-out.

    Separate from :class:`JudgingDesign` so that these rules can be tuned without
    touching the frozen design; none of it is ever sent to a judge's browser except
    a training item's texts and explanation, and how the judge's answer compares with
    the reference (within range, higher, lower: never the reference value itself).
    """

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="screening_settings")
    training_criteria = models.JSONField(
        default=list,
        blank=True,
        help_text="Criteria the pass rule checks (empty: every criterion with a reference value).",
    )
    training_tolerance = models.FloatField(
        default=1,
        validators=[MinValueValidator(0)],
        help_text="On point scales: an answer within ± this many points of the reference value is right.",
    )
    training_tolerances = models.JSONField(
        default=dict,
        blank=True,
        help_text="Criterion slug → tolerance on that criterion's scale; a criterion not named uses its scale's "
        "default (point scales: training_tolerance; a 0–100 slider: ±10; categories: exact).",
    )
    training_required = models.PositiveSmallIntegerField(
        default=0, help_text="Training items that must be right to pass (0: all of them)."
    )
    training_retries = models.PositiveSmallIntegerField(
        default=1, validators=[MaxValueValidator(10)], help_text="Further attempts after a failed one."
    )
    training_items_per_attempt = models.PositiveSmallIntegerField(
        default=0,
        validators=[MaxValueValidator(50)],
        help_text="Training items drawn at random from the pool for each attempt (0: every item, in order).",
    )
    attention_count = models.PositiveSmallIntegerField(
        default=0, validators=[MaxValueValidator(50)], help_text="Attention checks per judge (0: none)."
    )
    attention_policy = models.CharField(max_length=8, choices=AttentionPolicy.choices, default=AttentionPolicy.WARN)
    attention_max_failures = models.PositiveSmallIntegerField(
        default=2, validators=[MinValueValidator(1)], help_text="With the 'end' policy: failures that screen out."
    )
    qc_auto = models.BooleanField(default=False, help_text="Screen out judges whose control tests fail as they rate.")
    qc_auto_pvalue = models.FloatField(
        default=0.01,
        validators=[MinValueValidator(0.0001), MaxValueValidator(0.5)],
        help_text="A control test passes when its Mann–Whitney p is below this.",
    )
    qc_auto_min_controls = models.PositiveSmallIntegerField(
        default=10,
        validators=[MinValueValidator(1)],
        help_text="Controls a judge must have rated before the check runs.",
    )

    def __str__(self) -> str:
        return f"Screening of {self.study}"


class TrainingItem(TimeStampedModel):
    """A training pair with reference values per criterion and the researcher's explanation."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="training_items")
    position = models.PositiveIntegerField()
    token = models.CharField(max_length=32, unique=True)
    original = models.TextField()
    candidate = models.TextField()
    expected = models.JSONField(default=dict, help_text="Criterion slug → reference value on its scale.")
    explanation = models.TextField(blank=True)

    class Meta:
        ordering = ["study", "position"]
        constraints = [models.UniqueConstraint(fields=["study", "position"], name="judging_uniq_training_position")]

    def __str__(self) -> str:
        return f"Training item {self.position} of {self.study}"


class TrainingAnswer(TimeStampedModel):
    """A judge's answer to a training item in one attempt. Never a :class:`Judgment`."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="training_answers")
    item = models.ForeignKey(TrainingItem, on_delete=models.CASCADE, related_name="answers")
    attempt = models.PositiveSmallIntegerField()
    values = models.JSONField(default=dict)
    correct = models.BooleanField()

    class Meta:
        ordering = ["assignment", "attempt", "item__position"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "item", "attempt"], name="judging_uniq_training_answer")
        ]


class AttentionCheck(TimeStampedModel):
    """An instruction ("select 2 for fluency") shown after ``after_done`` real items. Never a :class:`Judgment`."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="attention_checks")
    token = models.CharField(max_length=32, unique=True)
    after_done = models.PositiveIntegerField()
    criterion = models.CharField(max_length=40)
    expected = models.FloatField()
    answer = models.FloatField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    passed = models.BooleanField(null=True)

    class Meta:
        ordering = ["assignment", "after_done", "id"]


class AttentionAnswer(TimeStampedModel):
    """One answer to an attention check drawn among the items (side by side, ESA, ranking),
    kept as a judgment's revision is, so that a check is answered, revised, replayed and read
    back as an item is (issue 38 items 11-14): the values as the judge sent them (cleaned as
    an item's), the idempotency key (one per judge, as for judgments) and the revision. Never a
    :class:`Judgment`: the check's verdict stays on :class:`AttentionCheck`, the first answer's."""

    attention = models.ForeignKey(AttentionCheck, on_delete=models.CASCADE, related_name="answers")
    judge = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=64)
    revision = models.PositiveIntegerField()
    values = models.JSONField()
    submitted_at = models.DateTimeField()

    class Meta:
        ordering = ["attention", "revision"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "key"], name="judging_uniq_attention_answer_key"),
            models.UniqueConstraint(fields=["attention", "revision"], name="judging_uniq_attention_answer_revision"),
        ]


class EsaItem(TimeStampedModel):
    """One candidate in one ESA judge's order (error-span protocol), as shown.

    ``proposed`` holds the spans shown pre-filled to this judge (span dicts as
    :mod:`metrics.core.spans.model` defines them: side, start, end, severity, category,
    missing; code-point offsets, end exclusive), copied when the item was written so that
    what was proposed is known whatever happens to its source later. Addressed by an
    opaque random token like :class:`AssignmentItem`.
    """

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="esa_items")
    candidate = models.ForeignKey(Candidate, on_delete=models.RESTRICT, related_name="+")
    position = models.PositiveIntegerField(help_text="1-based place in the judge's order.")
    token = models.CharField(max_length=32, unique=True)
    is_control = models.BooleanField(default=False)
    proposed = models.JSONField(default=list, blank=True, help_text="Spans shown pre-filled (server-side).")
    done_at = models.DateTimeField(null=True, blank=True, help_text="First submission.")

    class Meta:
        ordering = ["assignment", "position"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "position"], name="judging_uniq_esa_item_position"),
            models.UniqueConstraint(fields=["assignment", "candidate"], name="judging_uniq_esa_item_candidate"),
        ]

    def __str__(self) -> str:
        return f"ESA item #{self.position} of {self.assignment}"


class EsaProposal(TimeStampedModel):
    """The spans an imported proposal file proposes for one candidate of an ESA study (design
    ``esa_prefill == "imported"``), span dicts as :attr:`EsaItem.proposed`; opening copies
    them onto each judge's item. A new file replaces the study's proposals as a whole."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="esa_proposals")
    candidate = models.OneToOneField(Candidate, on_delete=models.CASCADE, related_name="+")
    spans = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["study", "candidate"]

    def __str__(self) -> str:
        return f"ESA proposal for candidate {self.candidate_id}"


class EsaJudgment(TimeStampedModel):
    """One submission of an ESA item: the spans kept, edited or added, and the 0–100 score.

    Revisions add rows; the latest counts (as :class:`Judgment`).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="esa_judgments")
    item = models.ForeignKey(EsaItem, on_delete=models.CASCADE, related_name="judgments")
    judge = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="esa_judgments")
    key = models.CharField(max_length=64, help_text="Client-generated idempotency key.")
    revision = models.PositiveIntegerField(default=1)
    is_latest = models.BooleanField(default=True)
    spans = models.JSONField(
        default=list, help_text="Span dicts (side, start, end, severity, category, missing, proposed)."
    )
    score = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0), MaxValueValidator(100)])
    served_at = models.DateTimeField()
    submitted_at = models.DateTimeField()
    seconds = models.FloatField(null=True, blank=True)
    active_seconds = models.FloatField(null=True, blank=True)
    source = models.CharField(max_length=8, choices=JudgmentSource.choices, default=JudgmentSource.API)

    class Meta:
        ordering = ["study", "judge", "item", "revision"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "key"], name="judging_uniq_esa_judgment_key"),
            models.UniqueConstraint(fields=["item", "revision"], name="judging_uniq_esa_judgment_revision"),
            models.UniqueConstraint(
                fields=["item"], condition=Q(is_latest=True), name="judging_one_latest_esa_judgment"
            ),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | (Q(score__gte=0) & Q(score__lte=100)), name="judging_esa_score_range"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judge} on ESA item {self.item_id} (rev. {self.revision})"


class RankingItem(TimeStampedModel):
    """k candidates of one original in one judge's order (ranking protocol), as shown.

    ``candidates`` lists the candidates' ids in the order drawn on the judge's screen (a
    seeded shuffle per judge and item), server-side only: the page names them 1..k.
    """

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="ranking_items")
    original = models.ForeignKey(Original, on_delete=models.RESTRICT, related_name="+")
    candidates = models.JSONField(help_text="Candidate ids in screen order (server-side only).")
    position = models.PositiveIntegerField(help_text="1-based place in the judge's order.")
    token = models.CharField(max_length=32, unique=True)
    is_control = models.BooleanField(default=False, help_text="A control candidate is among the k.")
    done_at = models.DateTimeField(null=True, blank=True, help_text="First submission.")

    class Meta:
        ordering = ["assignment", "position"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "position"], name="judging_uniq_rank_item_position"),
        ]

    def __str__(self) -> str:
        return f"ranking #{self.position} of {self.assignment}"


class RankingJudgment(TimeStampedModel):
    """One submission of a ranking: the candidates' ids best first, ties as groups, and
    optionally a 0–100 score each. Revisions add rows; the latest counts."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="ranking_judgments")
    item = models.ForeignKey(RankingItem, on_delete=models.CASCADE, related_name="judgments")
    judge = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="ranking_judgments")
    key = models.CharField(max_length=64, help_text="Client-generated idempotency key.")
    revision = models.PositiveIntegerField(default=1)
    is_latest = models.BooleanField(default=True)
    groups = models.JSONField(help_text="Candidate ids best first; a list of ids is a tie.")
    scores = models.JSONField(default=dict, blank=True, help_text="Candidate id (as text) → 0–100 score, when asked.")
    served_at = models.DateTimeField()
    submitted_at = models.DateTimeField()
    seconds = models.FloatField(null=True, blank=True)
    active_seconds = models.FloatField(null=True, blank=True)
    source = models.CharField(max_length=8, choices=JudgmentSource.choices, default=JudgmentSource.API)

    class Meta:
        ordering = ["study", "judge", "item", "revision"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "key"], name="judging_uniq_rank_judgment_key"),
            models.UniqueConstraint(fields=["item", "revision"], name="judging_uniq_rank_judgment_revision"),
            models.UniqueConstraint(
                fields=["item"], condition=Q(is_latest=True), name="judging_one_latest_rank_judgment"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judge} on ranking {self.item_id} (rev. {self.revision})"
