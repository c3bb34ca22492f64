"""Judging's shared tables: a study's design, judges' assignments, exclusions, opening
jobs, training, screening and attention checks, and the abstract bases of every
protocol's item and judgment tables.

An *item* is what one judge is shown at one place of their order (one candidate, a pair,
k candidates: the protocol says); a *judgment* is one submission for an item. Each
protocol defines its two tables in its own package (``protocols/<name>/models.py``, on
:class:`JudgingItemBase` and :class:`JudgmentBase`) and its unit declares them
(``item_model``, ``judgment_model``); the judging app's config imports those modules at
start-up (:meth:`annotation.judging.apps.JudgingConfig.import_models`). An item is
addressed in URLs and JSON only by its random ``token`` (never by a database id), so
nothing a judge's browser receives identifies the candidate, its system or whether it is
a control.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from annotation.models import Study, TimeStampedModel
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


def _tagged(tag: str) -> str:
    return f"{tag}_" if tag else ""


class JudgingItemBase(TimeStampedModel):
    """What every protocol's item table shares: one place in one judge's order.

    ``position`` is 1-based in the judge's order; ``token`` is the item's only address
    in URLs and JSON (random, unique); ``done_at`` is set by the first submission (later
    ones are revisions). A concrete table declares its ``assignment`` foreign key (each
    table has its own related name: ``items``, ``comparison_items``, …), what it shows
    (a candidate, a pair, k candidates) and its ``Meta``, subclassing ``JudgingItemBase.Meta``
    (the order) and naming its constraints with :func:`item_constraints`.
    """

    position = models.PositiveIntegerField(help_text="1-based place in the judge's order.")
    token = models.CharField(max_length=32, unique=True)
    done_at = models.DateTimeField(null=True, blank=True, help_text="First submission.")

    class Meta:
        abstract = True
        ordering = ["assignment", "position"]


def item_constraints(tag: str = "") -> list[models.BaseConstraint]:
    """The constraint every item table has: one item per place in an assignment, named
    ``judging_uniq_<tag>_item_position`` (``judging_uniq_item_position`` with no tag: the
    names the tables were created with, so that no migration renames them)."""
    return [
        models.UniqueConstraint(fields=["assignment", "position"], name=f"judging_uniq_{_tagged(tag)}item_position"),
    ]


class JudgmentBase(TimeStampedModel):
    """What every protocol's judgment table shares: one submission for one item, by one judge.

    Revisions add rows: ``revision`` counts from 1 per item and only the row with
    ``is_latest`` counts. ``key`` is the client's idempotency key (unique per judge), so
    a submission sent twice is stored once. ``served_at`` is when the server sent the
    item, ``seconds`` the server's time from serving to submitting, ``active_seconds`` the
    time the page was visible and focused (the client's count); ``source`` says whether
    it came from the judge's page or API or from an imported file. A concrete table
    declares its ``study``, ``item`` and ``judge`` foreign keys (with today's related
    names: ``judgments``, ``esa_judgments``, …), its answer fields and its ``Meta``,
    subclassing ``JudgmentBase.Meta`` (the order) and naming its constraints with
    :func:`judgment_constraints`.
    """

    key = models.CharField(max_length=64, help_text="Client-generated idempotency key.")
    revision = models.PositiveIntegerField(default=1)
    is_latest = models.BooleanField(default=True)
    served_at = models.DateTimeField()
    submitted_at = models.DateTimeField()
    seconds = models.FloatField(null=True, blank=True)
    active_seconds = models.FloatField(null=True, blank=True)
    source = models.CharField(max_length=8, choices=JudgmentSource.choices, default=JudgmentSource.API)

    class Meta:
        abstract = True
        ordering = ["study", "judge", "item", "revision"]


def judgment_constraints(tag: str = "") -> list[models.BaseConstraint]:
    """The constraints every judgment table has: a key once per judge, a revision once per
    item, and one latest row per item, named ``judging_uniq_<tag>_judgment_key``,
    ``judging_uniq_<tag>_judgment_revision`` and ``judging_one_latest_<tag>_judgment``
    (no tag: ``judging_uniq_judgment_key``, …; the names the tables were created with)."""
    t = _tagged(tag)
    return [
        models.UniqueConstraint(fields=["judge", "key"], name=f"judging_uniq_{t}judgment_key"),
        models.UniqueConstraint(fields=["item", "revision"], name=f"judging_uniq_{t}judgment_revision"),
        models.UniqueConstraint(fields=["item"], condition=Q(is_latest=True), name=f"judging_one_latest_{t}judgment"),
    ]


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
    """A judge's answer to a training item in one attempt. Never a judgment."""

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
    """An instruction ("select 2 for fluency") shown after ``after_done`` real items. Never a judgment."""

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
    judgment: the check's verdict stays on :class:`AttentionCheck`, the first answer's."""

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
