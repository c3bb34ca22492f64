"""The study's judging design: created with the defaults, changed until opening (then frozen
but for the controls' expected scores and the QC level)."""

from __future__ import annotations

from collections.abc import Mapping

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.judging.services.opening import open_job_active
from annotation.models import Study
from metrics.core.controls import CONTROL_KINDS

from .. import scales
from ..errors import DesignFrozen, DesignInvalid
from ..models import JudgingDesign
from ..protocols.registry import study_judgments_exist

#: Design fields that may still change after judging has started: they only
#: affect statistics, never what a judge sees or who sees what.
EDITABLE_WHEN_FROZEN = frozenset({"expected_scores", "qc_alpha"})
DESIGN_FIELDS = (
    "criteria",
    "judges_mode",
    "judges_per_item",
    "control_counts",
    "expected_scores",
    "seed",
    "qc_alpha",
    "show_context",
    "protocol",
    "comparison_per_criterion",
    "pairs_per_original",
    "esa_categories",
    "esa_prefill",
    "ranking_k",
    "ranking_scores",
)


def design_get_or_create(*, study: Study) -> JudgingDesign:
    """The study's judging design, created with the defaults on first use."""
    design, _ = JudgingDesign.objects.get_or_create(study=study)
    return design


@transaction.atomic
def design_update(*, study: Study, changes: Mapping[str, object]) -> JudgingDesign:
    """Change design fields (any of ``DESIGN_FIELDS``); validate; save.

    Once the study has been opened, only ``expected_scores`` and ``qc_alpha`` may
    change (:class:`DesignFrozen` otherwise); fields given with their current value
    are accepted, so a form can post the whole design back.
    """
    unknown = sorted(set(changes) - set(DESIGN_FIELDS))
    if unknown:
        raise DesignInvalid(f"unknown design field(s): {', '.join(unknown)}")
    design_get_or_create(study=study)
    design = JudgingDesign.objects.select_for_update().get(study=study)
    if not design.is_frozen and open_job_active(study) is not None:
        raise DesignFrozen("Judging of this study is being opened in the background, so the design cannot change now.")
    if design.is_frozen:
        blocked = sorted(f for f, v in changes.items() if f not in EDITABLE_WHEN_FROZEN and getattr(design, f) != v)
        if blocked:
            raise DesignFrozen(
                "Judging has started, so the design is frozen: "
                f"{', '.join(blocked)} can no longer change. Only the controls' expected scores and the "
                "QC significance level can still be edited."
            )
    changed = {f for f, v in changes.items() if hasattr(design, f) and v != getattr(design, f)}
    # Any protocol's judgments, imported ones included: a draft may hold imported rankings or
    # spans, which a change of protocol would strand in a table the study no longer reads.
    for field in ("criteria", "protocol"):
        if field in changed and study_judgments_exist(study=study):
            raise DesignFrozen(f"This study has judgments (imported ones count), so its {field} can no longer change.")
    changes = dict(changes)
    if "criteria" in changes:
        criteria = changes["criteria"] = scales.criteria_normalise(changes["criteria"])
        if "expected_scores" not in changes and isinstance(criteria, list) and not scales.criteria_errors(criteria):
            changes["expected_scores"] = expected_kept(design.expected_scores, criteria)
    for field, value in changes.items():
        setattr(design, field, value)
    try:
        design.full_clean()
    except ValidationError as exc:
        raise DesignInvalid("The design is not valid.", field_errors=exc.message_dict) from None
    design.save()
    return design


def expected_kept(expected: Mapping, criteria: list[dict]) -> dict:
    """The controls' expected values that still fit new criteria (same slug, value on the
    new scale); the others become unknown (missing)."""
    scale_of = {c["slug"]: c["scale"] for c in criteria}
    out = {}
    for kind in CONTROL_KINDS:
        kept = {}
        for slug, v in (expected.get(kind) or {}).items() if isinstance(expected, Mapping) else ():
            if slug in scale_of and v is not None:
                try:
                    if scales.value_clean(scale_of[slug], v) == v:
                        kept[slug] = v
                except ValueError:
                    pass
        out[kind] = kept
    return out
