"""What a judging protocol declares: the :class:`JudgingProtocol` interface.

A protocol package subclasses it once (``absolute/unit.py``, ``side_by_side/unit.py``)
and registers the instance in :mod:`.registry`. The unit is logic, not web: it names
its pages by URL name and its report by module path, so services may ask it without
importing a view (the import contracts of ``.importlinter`` hold).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, Max, Q, Sum
from django.utils import timezone

from annotation.importing.reading import ImportIssue, StudyImportError
from annotation.models import Study

from ..models import Assignment, JudgingDesign

if TYPE_CHECKING:  # for the report methods' types only: the units import no report code
    from metrics.reports.computed import ReportComputed
    from metrics.reports.exports.model import ReportTable
    from metrics.reports.models import Report


def grouped(rows, key: str, value: Any = None) -> dict[Any, Any]:
    """``key`` → ``value`` (an aggregate; default: how many rows) over the ``rows`` of a queryset
    that have that key, in one grouped query."""
    return dict(rows.values(key).annotate(n=value or Count("id")).order_by().values_list(key, "n"))


@dataclass(frozen=True)
class DemoStudy:
    """A protocol's demo study: ``verses`` (a slice of :func:`annotation.demo.demo_verses`) of
    the demo study, every system's candidate of each, the demo judges, saved with ``design``
    and opened; made once, by ``name``, on every ``load_demo`` (so a demo loaded before the
    protocol existed gains it). ``said`` is what ``load_demo`` prints once it is open
    (``str.format`` with ``name``, ``judges``, ``items`` and ``controls``)."""

    name: str
    participant_title: str
    description: str
    verses: slice
    design: Mapping[str, object]
    said: str


@dataclass(frozen=True)
class AnswerKey:
    """One answer of a judge's page and the keys that choose it, as the page lays it out.

    ``keys`` are ``KeyboardEvent.key`` values; ``shown`` is what the page prints under
    the answer (the first key), so the key under an answer always chooses it.
    """

    value: str
    keys: tuple[str, ...]

    @property
    def shown(self) -> str:
        return {"ArrowLeft": "←", "ArrowRight": "→", "ArrowDown": "↓", "ArrowUp": "↑"}.get(self.keys[0], self.keys[0])


#: The keys every judge's page uses to move around, whatever its protocol: submit, the
#: instructions. A protocol adds its own way back (:attr:`JudgingProtocol.back_keys`)
#: and its answer keys, none of which may be one of these (a key means one thing).
NAVIGATION_KEYS: tuple[str, ...] = ("Enter", "?")

#: The protocol of a study without a design, and of reports stored without a protocol.
DEFAULT_PROTOCOL = "absolute"


def study_protocol_slug(study: Study) -> str:
    """The slug of the protocol ``study`` is judged with (one small query; the default without a design)."""
    slug = JudgingDesign.objects.filter(study_id=study.pk).values_list("protocol", flat=True).order_by().first()
    return slug or DEFAULT_PROTOCOL


def judge_progress(*, study: Study, item_model, judgment_model) -> dict[int, tuple[int, int, float]]:
    """:meth:`JudgingProtocol.progress_by_judge` for a protocol whose items and judgments are
    ``item_model`` and ``judgment_model`` rows (two grouped queries)."""
    counts = {
        judge: (done, total)
        for judge, done, total in item_model.objects.filter(assignment__study=study)
        .values("assignment__judge_id")
        .annotate(done=Count("id", filter=Q(done_at__isnull=False)), total=Count("id"))
        .order_by()
        .values_list("assignment__judge_id", "done", "total")
    }
    active = dict(
        judgment_model.objects.filter(study=study, is_latest=True)
        .values("judge_id")
        .annotate(s=Sum("active_seconds"))
        .order_by()
        .values_list("judge_id", "s")
    )
    return {judge: (done, total, float(active.get(judge) or 0.0)) for judge, (done, total) in counts.items()}


@dataclass(frozen=True)
class ExportAnswer:
    """One latest judgment as the progress page's tidy and wide CSVs write it, for a protocol
    whose answers are not the design's criteria (:meth:`JudgingProtocol.export_answers`).

    ``item`` names what was judged the same way for every judge (a candidate, a ranked
    candidate within its set, a pair); ``values`` maps each of the protocol's
    :meth:`~JudgingProtocol.export_questions` the judgment answered to its value."""

    judge: str
    item: str
    original_id: str
    system: str
    control_kind: str  # "" for a genuine item
    original: str
    candidate: str
    values: dict[str, Any]
    seconds: float | None
    active_seconds: float | None
    submitted_at: Any
    revision: int


@dataclass(frozen=True)
class PlannerPilot:
    """What the planner estimates its assumptions from (:meth:`JudgingProtocol.planner_pilot`):
    the pilot's scores as the tidy judgments frame (``judge``, ``item``, ``original``,
    ``system``, ``is_control``, ``criterion``, ``score``), the criterion it reads, and whether
    the scores are on a 1–5 point scale (the simulator rounds and clips to it; else it keeps
    them continuous)."""

    frame: Any
    criterion: str
    discrete: bool


class PilotUnsupported(ValueError):
    """The protocol's judgments are not scores the planner can estimate from (the message says
    what it supports instead)."""


def items_answered(*, item_model: Any, assignment: Assignment) -> int:
    """How many of ``assignment``'s items (rows of a protocol's ``item_model``) are answered."""
    return item_model.objects.filter(assignment=assignment, done_at__isnull=False).count()


class JudgingProtocol:
    """One judging protocol. Subclasses set the attributes and implement the methods.

    Every method is keyword-only and called by the shared services and doors with the
    study's design already read; writes run inside the caller's transaction.
    """

    #: The value stored in :attr:`JudgingDesign.protocol` (never shown to judges).
    slug: str = ""
    #: Its short name in messages ("side-by-side comparison").
    name: str = ""
    #: The researcher's longer label (design page, docs).
    label: str = ""
    #: URL name of the judge's page: the resume point of a judge of this protocol.
    judge_page: str = ""
    #: Template of the judge's instructions; :meth:`instructions_context` fills it.
    instructions_template: str = ""
    #: Keys that go back to the previous item on the judge's page (never an answer key).
    back_keys: tuple[str, ...] = ("Backspace",)
    #: Whether a large opening may run in a worker (:mod:`annotation.judging.services.open_job`).
    opens_in_background: bool = False
    #: Whether judgments in the long format (criterion values, :mod:`annotation.importing.judgments`)
    #: can be imported: the judgments upload and its job. Any protocol's own file is imported by
    #: :meth:`judgments_import` (``manage.py import_judgments``).
    imports_judgments: bool = False
    #: Whether opening builds on the assignment a judgments import gave a judge of the draft
    #: (:func:`~annotation.judging.protocols.absolute.assignments.assignment_write_opening`); where not,
    #: opening refuses such a draft with a message instead of failing.
    opens_onto_imported_judgments: bool = False
    #: Whether training items and attention checks come before (and among) the judge's
    #: items; a unit that says so answers the "training and attention checks" methods.
    has_screening: bool = False
    #: The design page's training items (table, add form, file columns) for this protocol.
    training_items_template: str = ""
    #: The judge's training page, filled by :meth:`training_page_context` (or, where that
    #: returns None, by the design's criteria and their scale inputs).
    training_template: str = ""
    #: Where a waiting attention check is answered: its own page (an instruction), or the
    #: protocol's judge page, where it is drawn like any item (blinded among them).
    attention_page: str = "judging:attention"
    #: Whether the training pass rule has tolerances per criterion (the rules form offers them).
    training_tolerances: bool = True
    #: Whether the pass rule may check only some of the questions (the rules form offers
    #: "criteria checked"); False for a protocol with one question (ranking: the order).
    training_questions_checked: bool = True
    #: Included on the training feedback page after the table (empty: nothing), with
    #: :meth:`training_feedback_context` (the ESA protocol lists the judge's own spans).
    training_feedback_template: str = ""
    #: The protocol's own CSV exports on the design page: (label, URL name) pairs.
    exports: tuple[tuple[str, str], ...] = ()
    #: The template of this protocol's part of the report page (its report: :meth:`report_compute`,
    #: :meth:`report_tables`). Empty: the absolute report's page.
    report_template: str = ""
    #: Report formats the report page links for this protocol's reports.
    report_formats: tuple[tuple[str, str], ...] = (
        ("html", "Standalone HTML"),
        ("tex", "LaTeX tables"),
        ("json", "JSON"),
        ("zip", "ZIP of everything"),
    )
    #: Whether adaptive allocation (:mod:`annotation.adaptive`) may reorder this
    #: protocol's items (it reasons about absolute scores of systems).
    adaptive_allocation: bool = False
    #: The report settings that mean something for this protocol's reports (the form and
    #: the API offer only these); None: every setting of the absolute report.
    report_settings: tuple[str, ...] | None = None
    #: Template of the protocol's own QC table on the QC page (the rows of :meth:`qc_rows`); empty
    #: where the protocol has none (the absolute QC table is the page itself).
    qc_template: str = ""

    #: The protocol's tables, defined in its package's ``models.py``: a row per item of an
    #: assignment (on :class:`~annotation.judging.models.JudgingItemBase`: ``assignment``,
    #: ``token``, ``position``, ``done_at``) and a row per submission (on
    #: :class:`~annotation.judging.models.JudgmentBase`: ``study``, ``item``, ``judge``,
    #: ``is_latest``, ``submitted_at``, ``active_seconds``). Shared code asks these (and the
    #: methods below built on them) instead of naming a protocol's table.
    item_model: Any = None
    judgment_model: Any = None
    #: The key of this protocol's judgments in a study's fingerprint (empty: the slug), and
    #: whether it is there even with none (so that fingerprints stored earlier stay valid).
    fingerprint_key: str = ""
    fingerprint_always: bool = False
    #: The protocol's small demo study, made from the demo study's texts by ``load_demo``
    #: (:func:`annotation.judging.demo.protocol_studies_setup`); None: the protocol has none.
    demo: DemoStudy | None = None

    # --- the protocol's tables, as shared code asks them -----------------------------------

    def judgments_of_study(self, *, study: Study):
        """Every judgment row of ``study`` in this protocol's table (revisions included)."""
        return self.judgment_model.objects.filter(study=study)

    def judgments_exist(self, *, study: Study) -> bool:
        """Whether ``study`` holds any judgment of this protocol (reset and deletion guards)."""
        return self.judgments_of_study(study=study).exists()

    def items_of_study(self, *, study: Study):
        """Every item row of ``study``'s assignments in this protocol's table."""
        return self.item_model.objects.filter(assignment__study=study)

    def last_judgment_at(self, *, assignment: Assignment):
        """When the judge of ``assignment`` last submitted a judgment of this protocol (None: never)."""
        return (
            self.judgment_model.objects.filter(item__assignment=assignment)
            .order_by("-submitted_at")
            .values_list("submitted_at", flat=True)
            .first()
        )

    def last_judgment_query(self, *, study_id, judge_id):
        """The ``submitted_at`` of the judge's latest judgment of this protocol in the study, as a
        queryset of at most one row; the arguments may be ``OuterRef`` expressions, so a
        ``Subquery`` per unit reads it for a whole table of judges in one query (the seat release)."""
        return (
            self.judgment_model.objects.filter(study_id=study_id, judge_id=judge_id)
            .order_by("-submitted_at")
            .values("submitted_at")[:1]
        )

    def last_judgment_by_judge(self, *, study_id: int, judge_ids) -> dict[int, Any]:
        """Judge id → when they last submitted a judgment of this protocol in the study (judges
        without one are absent), in one grouped query."""
        return grouped(
            self.judgment_model.objects.filter(study_id=study_id, judge_id__in=judge_ids),
            "judge_id",
            Max("submitted_at"),
        )

    def latest_judgments(self, *, study: Study):
        """The latest revision of every judgment of ``study`` in this protocol's table."""
        return self.judgments_of_study(study=study).filter(is_latest=True)

    def latest_by_judge(self, *, study: Study) -> dict[str, tuple[int, float | None]]:
        """Judge username → (latest judgments, their active seconds summed: None where unknown),
        in one grouped query (the dashboard's judges table)."""
        return {
            name: (n, secs)
            for name, n, secs in self.latest_judgments(study=study)
            .values("judge__username")
            .annotate(n=Count("id"), s=Sum("active_seconds"))
            .order_by()
            .values_list("judge__username", "n", "s")
        }

    def done_per_assignment(self, *, study: Study) -> dict[int, int]:
        """Assignment id → its answered items (the progress page's judges)."""
        return grouped(self.items_of_study(study=study).filter(done_at__isnull=False), "assignment_id")

    def done_per_study(self, *, judge: User) -> dict[int, int]:
        """Study id → how many items of this protocol ``judge`` has answered there (the judge's home)."""
        return grouped(
            self.item_model.objects.filter(assignment__judge=judge, done_at__isnull=False), "assignment__study_id"
        )

    def _per_item(self, *, study: Study, done: bool) -> dict[Any, int]:
        items = self.items_of_study(study=study)
        if done:
            items = items.filter(done_at__isnull=False)
        return grouped(items, "candidate_id")

    def assigned_per_item(self, *, study: Study) -> dict[Any, int]:
        """Item → how many assignments hold it. An item is what every judge of it shares (the
        default: a candidate; a protocol whose items are not one candidate overrides this,
        :meth:`done_per_item` and :meth:`item_candidates` together)."""
        return self._per_item(study=study, done=False)

    def done_per_item(self, *, study: Study) -> dict[Any, int]:
        """Item (as :meth:`assigned_per_item` names it) → how many judges have answered it."""
        return self._per_item(study=study, done=True)

    def item_candidates(self, item: Any) -> tuple[int, ...]:
        """The candidate ids an item (as :meth:`assigned_per_item` names it) shows a judge."""
        return (item,)

    def rated_per_system(self, *, study: Study) -> dict[str, int]:
        """System name → latest judgments of its candidates (the progress page's systems)."""
        return grouped(self.latest_judgments(study=study), "item__candidate__system__name")

    def export_rows(self, *, study: Study, wide: bool) -> Iterator[list] | None:
        """The tidy (``wide``: wide) CSV of ``study``, header first, where the protocol writes
        its own (the absolute protocol: a row per criterion with z-scores, streamed); None: the
        shared rows of :meth:`export_answers` (:mod:`annotation.judging.selectors.export_rows`)."""
        return None

    def export_questions(self, *, study: Study) -> list[str] | None:
        """The columns of the tidy and wide CSVs' answers (the tidy ``criterion``), in order;
        asked where :meth:`export_rows` is None."""
        return None

    def export_answers(self, *, study: Study):
        """The latest judgments as :class:`ExportAnswer` values, by judge then item, screened-out
        judges left out; asked where :meth:`export_rows` is None."""
        raise NotImplementedError

    # --- the planner ------------------------------------------------------------------------

    def planner_pilot(self, *, study: Study, criterion: str | None = None) -> PlannerPilot:
        """The study's judgments as the planner's pilot, on ``criterion`` (None: the protocol's
        primary score). ``ValueError`` for a criterion the design does not have;
        :class:`PilotUnsupported` where the judgments are not scores (the default: a unit
        whose judgments are scores says how to read them, as absolute rating does)."""
        raise PilotUnsupported(f"the planner cannot estimate from {self.name} judgments")

    # --- items and assignment -----------------------------------------------------------

    def assignments_write(self, *, study: Study, design: JudgingDesign, judges: list[User]) -> tuple[int, int]:
        """Write every judge's assignment at opening (controls exist already). Returns
        (items planned, assignment items written)."""
        raise NotImplementedError

    def assignment_late(self, *, study: Study, design: JudgingDesign, judge: User) -> Assignment:
        """The assignment of a judge added after opening. The caller
        (:func:`~annotation.judging.services.assignments.assignment_ensure_for_judge`) holds the
        design's lock and a savepoint, and answers a concurrent write of the same judge's
        assignment (the unique ``(study, judge)``) with the one written first."""
        raise NotImplementedError

    def assignment_for_participant(
        self, *, study: Study, design: JudgingDesign, judge: User, n_items: int | None
    ) -> Assignment:
        """The assignment of a join-link participant: ``n_items`` items (None: all) from
        those with the fewest live judges (the caller holds the design's lock)."""
        raise NotImplementedError

    def assignment_release_unfinished(self, *, assignment: Assignment) -> int:
        """Give back the items a timed-out participant has not done (answered ones and their
        judgments stay); return how many."""
        deleted, _ = self.item_model.objects.filter(assignment=assignment, done_at__isnull=True).delete()
        if deleted:
            assignment.n_items = self.item_model.objects.filter(assignment=assignment).count()
            assignment.save(update_fields=["n_items", "updated_at"])
        return deleted

    def items_release_unrated(self, *, assignment: Assignment, keep_next: bool = False) -> tuple[int, int]:
        """Give back the assignment's unrated items while its judge may be submitting (the
        adaptive stop); returns (released, left unrated). Runs in its own transaction.

        It never waits on an item, so it cannot deadlock with a submission: the lock order
        is the assignment row, then its items (as every other release); items another
        transaction holds (a submission in flight, the adaptive swap) are skipped
        (``SKIP LOCKED``; on SQLite the write lock serialises the two instead), and the
        delete re-checks ``done_at`` on rows this transaction holds, so an item judged
        meanwhile keeps its judgment (a delete by id alone broke the judgment's foreign
        key). ``keep_next`` keeps the judge's next unrated item, the one on their screen,
        so that the judgment they are giving is stored.
        """
        model = self.item_model
        with transaction.atomic():
            if not list(Assignment.objects.select_for_update().filter(pk=assignment.pk).values_list("pk", flat=True)):
                return 0, 0
            unrated = model.objects.filter(assignment_id=assignment.pk, done_at__isnull=True)
            kept = unrated.order_by("position").values_list("pk", flat=True).first() if keep_next else None
            free = list(
                unrated.select_for_update(skip_locked=True).exclude(pk=kept).order_by("pk").values_list("pk", flat=True)
            )
            _, per_model = model.objects.filter(pk__in=free, done_at__isnull=True).delete()
            released = per_model.get(model._meta.label, 0)
            if released:
                Assignment.objects.filter(pk=assignment.pk).update(
                    n_items=model.objects.filter(assignment_id=assignment.pk).count(), updated_at=timezone.now()
                )
            return released, unrated.count()

    def items_done(self, *, assignment: Assignment) -> int:
        """How many of the assignment's items the judge has answered."""
        return items_answered(item_model=self.item_model, assignment=assignment)

    def items_remaining(self, *, assignment: Assignment) -> int:
        """How many of the assignment's items are still unanswered (0: the judge is done)."""
        return self.item_model.objects.filter(assignment=assignment, done_at__isnull=True).count()

    # --- the judge's items as the judge's page and API show them -------------------------------
    # The shared judge-page flow (annotation.judging.web.JudgePages) and the next-item API
    # (annotation.judging.apis.protocol.next_entry_for_api) ask these; an "entry" is the protocol's
    # blinded value for the judge (texts, its token, position, done and total), never a row.

    def entry_next(self, *, assignment: Assignment) -> Any | None:
        """The judge's next unanswered item (None: every item is answered)."""
        raise NotImplementedError

    def entry_previous(self, *, study: Study, judge: User) -> Any | None:
        """The item the judge answered last (None: none yet): the done page's way back."""
        raise NotImplementedError

    def entry_for_token(self, *, study: Study, judge: User, token: str) -> Any:
        """One item of the judge's own assignment, or an attention check served to them, by its
        token (``ItemNotFound`` for any other token)."""
        raise NotImplementedError

    def entry_attention(self, *, check: Any) -> Any:
        """A waiting attention check drawn like an item (for a unit whose ``attention_page`` is
        its own judge page)."""
        raise NotImplementedError

    def answer_submit(
        self,
        *,
        study: Study,
        judge: User,
        token: object,
        key: object,
        serve_stamp: object,
        active_seconds: object,
        source: str,
        **answer: object,
    ) -> Any:
        """Take the judge's answer to an entry, an item or an attention check alike (one path,
        so that refusals, replays and revisions cannot tell them apart), from the page's form or
        the API: ``answer`` is the protocol's own part (spans and score, an order, answers).
        Answers the ``SubmitResult``; refusals raise ``JudgingError``."""
        raise NotImplementedError

    def progress_by_judge(self, *, study: Study) -> dict[int, tuple[int, int, float]]:
        """Judge id → (items answered, items assigned, active seconds of the latest answers),
        in a few queries for the whole study (the researcher's participants table)."""
        return judge_progress(study=study, item_model=self.item_model, judgment_model=self.judgment_model)

    # --- the judge's page ---------------------------------------------------------------

    def answer_keys(self, *, design: JudgingDesign, rtl: bool) -> list[AnswerKey] | None:
        """The answers of one question, in the page's source order, each with the keys that
        choose it where it is drawn (``rtl``: the page is mirrored). None: the answers are
        per criterion, keyed by the criterion's scale on the rating page."""
        return None

    def instructions_context(self, *, design: JudgingDesign, rtl: bool) -> dict:
        """What the instructions template needs beyond the study (texts only: blinded);
        ``rtl``: the page is mirrored (its keys follow the screen)."""
        return {}

    # --- quality control ----------------------------------------------------------------

    # --- the report -----------------------------------------------------------------------

    def report_compute(self, *, report: Report, settings: Mapping[str, Any]) -> ReportComputed:
        """This protocol's report, computed for the one report job
        (:func:`metrics.reports.services.build.report_build`, which stores it, fails it or
        keeps a finished one; a ``ValueError`` fails it with its message); its own code lives
        in the package's ``report.py``."""
        raise NotImplementedError

    def dashboard_answers(self, *, study: Study) -> dict | None:
        """The live figures of the study dashboard as plain JSON (agreement, the systems' ranking,
        ``available`` and a ``reason`` when not computable yet), which the dashboard's worker
        computes (:func:`metrics.dashboard.services.figures.study_answers`). None: the protocol
        has none yet, and the dashboard says so and points to the report."""
        return None

    def report_tables(self, result: Mapping[str, Any]) -> list[ReportTable]:
        """The tables of a finished report of this protocol in page order (the report page, every
        export format and the API read them: :func:`metrics.reports.exports.tables.report_tables`)."""
        raise NotImplementedError

    def qc_rows(self, *, study: Study) -> list[dict] | None:
        """The protocol's own QC table on the QC page (None: only the shared judge QC)."""
        return None

    # --- training and attention checks (only asked when ``has_screening``) -------------------

    def training_columns(self, *, design: JudgingDesign | None) -> tuple[str, ...]:
        """The text columns of a training item (the file's required ones first)."""
        raise NotImplementedError

    def training_slugs(self, *, design: JudgingDesign | None) -> list[str]:
        """The criteria or questions a training reference may be given for (the pass rule's
        ``training_criteria`` names some of them)."""
        raise NotImplementedError

    def training_questions(self, *, design: JudgingDesign) -> list[dict]:
        """What a training item has a reference for, as the design page's add form names them
        (dicts with ``slug`` and ``name``)."""
        return [{"slug": c["slug"], "name": c["name"]} for c in design.criteria]

    def training_item_clean(self, *, design: JudgingDesign | None, row, from_text: bool) -> tuple[dict, dict]:
        """(the :class:`TrainingItem` fields, errors by column) for one item given as a flat
        mapping (form, API or a file's row)."""
        raise NotImplementedError

    def training_answer_clean(self, *, design: JudgingDesign | None, answers, from_text: bool) -> dict:
        """A judge's training answer, checked like a real answer (:class:`JudgmentInvalid`)."""
        raise NotImplementedError

    def training_verdicts(self, *, design: JudgingDesign | None, settings, values, expected) -> dict[str, str]:
        """How an answer compares with the reference, per question or criterion with one
        (``within``/``too_high``/``too_low``/``same``/``different``: never the reference)."""
        raise NotImplementedError

    def training_correct(self, *, design: JudgingDesign | None, settings, values, expected) -> bool:
        """Whether a training answer is right under the study's rules."""
        raise NotImplementedError

    def training_answer_check(self, *, design: JudgingDesign | None, item, values: dict) -> dict:
        """A cleaned training answer checked against the item it answers (the ESA protocol:
        span offsets on the item's texts); :class:`JudgmentInvalid` when it does not fit."""
        return values

    def training_item_for_judge(self, *, item) -> dict:
        """A training item as the judge's API gives it (texts and token only)."""
        raise NotImplementedError

    def training_page_context(
        self, *, design: JudgingDesign, item, posted: dict, field_errors: dict, rtl: bool
    ) -> dict | None:
        """What :attr:`training_template` needs for ``item`` beyond the progress (None: the
        design's criteria with the shared scale inputs, as on the rating page)."""
        return None

    def training_feedback_rows(self, *, design: JudgingDesign, values: dict, verdicts: dict) -> list[dict] | None:
        """The feedback table's rows (name, yours, verdict); None: one per criterion of the design."""
        return None

    def training_feedback_context(self, *, design: JudgingDesign | None, item, values: dict) -> dict:
        """What :attr:`training_feedback_template` needs (the judge's own answer beyond the table)."""
        return {}

    def attention_draw(self, *, design: JudgingDesign | None, rng) -> tuple[str, float]:
        """A new attention check's (question or criterion slug, requested answer as a number)."""
        raise NotImplementedError

    def attention_score(self, *, design: JudgingDesign | None, check, value) -> tuple[float | None, bool]:
        """(the answer as stored, whether it is the requested one) for an answer to ``check``;
        :class:`~annotation.judging.errors.JudgingError` when the answer is not valid."""
        raise NotImplementedError

    # --- importing judgments collected elsewhere -----------------------------------------

    def judgments_import(
        self, *, study: Study, data: bytes, filename: str, fmt: str | None = None, mode: str | None = None
    ):
        """Write ``data``, a file of this protocol's judgments collected elsewhere, into ``study``,
        all or nothing, and return a summary whose ``describe()`` says in one sentence what was
        written. ``manage.py import_judgments`` asks the study's unit. ``fmt`` and ``mode`` are
        the long format's options (:mod:`annotation.importing.judgments`); a protocol whose file
        is JSON Lines refuses them (:func:`long_format_options_refuse`). Raises
        :class:`~annotation.importing.reading.StudyImportError` naming every problem; here, for a
        protocol with no import format, at once."""
        raise StudyImportError(
            filename,
            [ImportIssue(f"this study's protocol is {self.name}; no file of its judgments can be imported")],
        )

    # --- the registry's question --------------------------------------------------------

    @property
    def checks_among_items(self) -> bool:
        """Whether its attention checks are drawn on its judge page among the items (blinded like
        them, and counted in the judge's "n of N"), rather than on a page of their own."""
        return self.attention_page == self.judge_page

    def is_protocol_of(self, study: Study) -> bool:
        """Whether ``study`` is judged with this protocol (doors of this package check it)."""
        return study_protocol_slug(study) == self.slug

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.slug}>"


def long_format_options_refuse(*, unit: JudgingProtocol, filename: str, fmt: str | None, mode: str | None) -> None:
    """Raise :class:`~annotation.importing.reading.StudyImportError` if ``fmt`` or ``mode`` is given
    for ``unit``'s judgments file, which is JSON Lines and where a judge's later line revises the
    earlier one: ``--format`` and ``--mode`` are the long format's."""
    if fmt not in (None, "jsonl") or mode is not None:
        raise StudyImportError(
            filename,
            [
                ImportIssue(
                    f"a {unit.name} file is JSON Lines, and a later line of a judge revises the earlier one; "
                    "--format and --mode are for the long format of criterion values"
                )
            ],
        )
