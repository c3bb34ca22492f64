"""The canonical judgments frame (``metrics.core.stats.data``'s tidy shape), built
column-wise for large studies; what QC, reports and metric correlations read."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from itertools import islice

import numpy as np
import pandas as pd

from annotation.models import Study

from ...enums import CONTROL_KIND_OF_SYSTEM_KIND
from ...selectors.design import study_criteria_slugs
from ...selectors.exclusions import judges_excluded
from .exports import JUDGMENT_COLUMNS
from .models import Judgment

JUDGMENT_FRAME_COLUMNS = (
    "judge",
    "item",
    "original",
    "system",
    "is_control",
    "control_kind",
    "criterion",
    "score",
    "seconds",
    "submitted_at",
)


def _frame_queryset(study: Study):
    """One row per latest judgment, in the frame's order (judge, candidate): username,
    candidate id, original's external id, system name and kind, the values map,
    seconds, submitted_at."""
    return (
        Judgment.objects.filter(study=study, is_latest=True)
        .order_by("judge__username", "item__candidate_id")
        .values_list(*JUDGMENT_COLUMNS)
    )


#: Judgments read per database round trip by :func:`judgments_frame` (bounds its
#: transient Python objects: one tuple and a few strings per judgment in a chunk).
FRAME_CHUNK_SIZE = 20_000


def _missing_like_pandas() -> object:
    """What pandas puts for a None among strings after inferring the column and casting
    it back to object: None under pandas 2, NaN under pandas 3's string inference. The
    frame was first built by ``from_records``, so its ``control_kind`` holds this value
    for non-controls in a frame that also has controls (and None in one without)."""
    return pd.DataFrame.from_records([("x",), (None,)], columns=["k"]).astype(object)["k"].iloc[1]


class _Codes(dict):
    """Value → dense integer code, in order of first appearance."""

    def codes(self, values) -> np.ndarray:
        get = self.setdefault
        return np.fromiter((get(v, len(self)) for v in values), dtype=np.int64, count=len(values))

    def values_array(self) -> np.ndarray:
        out = np.empty(len(self), dtype=object)
        out[:] = list(self)
        return out


def _object_series(values: np.ndarray) -> pd.Series:
    # dtype=object explicitly: pandas 3 would otherwise infer its own string dtype.
    return pd.Series(values, dtype=object, copy=False)


#: The frames read inside :func:`judgments_frames_shared` (None outside it).
_SHARED: ContextVar[dict[tuple[int, bool], pd.DataFrame] | None] = ContextVar("judgments_frames_shared", default=None)


@contextmanager
def judgments_frames_shared() -> Iterator[None]:
    """Inside the block, :func:`judgments_frame` reads each study's judgments from the
    database once; later calls get a copy of that frame (pandas copies on write, so a caller
    that changes its copy changes nothing for the others).

    For work that reads the same frame in several places and wants them to agree: a
    dashboard refresh computes the judges' QC and the answers from one read, where the two
    read the same rows apart (the longest query of a refresh, twice).
    """
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def judgments_frame(*, study: Study, include_excluded_judges: bool = False) -> pd.DataFrame:
    """The study's judgments in the canonical tidy shape (``metrics.core.stats.data``).

    One row per (judge, item, criterion) from each item's *latest* revision, with
    columns ``judge`` (username), ``item`` (str of the candidate's id: the same item
    for every judge), ``original`` (the original's external id), ``system`` (system
    name), ``is_control`` (bool), ``control_kind`` ("identical"/"random"/"unigram";
    missing for other systems: None, or NaN under pandas 3 when the frame has
    controls), ``criterion`` (slug), ``score`` (int), ``seconds`` (float, server time
    from serving to submitting), ``submitted_at`` (aware datetime). Judges excluded
    by a researcher are left out unless ``include_excluded_judges``. Sorted by judge,
    item, criterion order.

    Built column-wise: the rows are read in chunks of :data:`FRAME_CHUNK_SIZE` from one
    query into typed arrays (strings as codes into their distinct values), then spread
    over the criteria; string columns hold references to one Python string per
    distinct value, not one per row. Inside :func:`judgments_frames_shared`, read once.
    """
    shared = _SHARED.get()
    if shared is None:
        return _frame_read(study=study, include_excluded_judges=include_excluded_judges)
    key = (study.pk, include_excluded_judges)
    if key not in shared:
        shared[key] = _frame_read(study=study, include_excluded_judges=include_excluded_judges)
    return shared[key].copy(deep=False)


def _frame_read(*, study: Study, include_excluded_judges: bool) -> pd.DataFrame:
    excluded = set() if include_excluded_judges else judges_excluded(study=study)
    qs = _frame_queryset(study)
    if excluded:
        qs = qs.exclude(judge__username__in=excluded)
    judges, originals, systems = _Codes(), _Codes(), _Codes()
    # Per judgment: its codes, then how many criteria it has values for (a page or API
    # judgment has all of them; an imported one may lack some), so the per-judgment
    # columns are repeated by that count instead of a fixed four.
    parts: dict[str, list] = {
        "judge": [],
        "cand": [],
        "original": [],
        "system": [],
        "crit": [],
        "score": [],
        "n": [],
        "seconds": [],
        "submitted_at": [],
    }
    order = study_criteria_slugs(study=study)
    rank = {c: i for i, c in enumerate(order)}
    rows = iter(qs.iterator(chunk_size=FRAME_CHUNK_SIZE))
    while chunk := list(islice(rows, FRAME_CHUNK_SIZE)):
        cols = list(zip(*chunk))
        del chunk
        n = len(cols[0])
        parts["judge"].append(judges.codes(cols[0]))
        parts["cand"].append(np.fromiter(cols[1], dtype=np.int64, count=n))
        parts["original"].append(originals.codes(cols[2]))
        parts["system"].append(systems.codes(list(zip(cols[3], cols[4]))))
        crit, score, counts = [], [], np.empty(n, dtype=np.int64)
        for i, values in enumerate(cols[5]):
            for c in values:
                if c not in rank:  # a value for a criterion no longer in the design: kept, after the others
                    rank[c] = len(rank)
            present = sorted(values, key=rank.__getitem__)
            counts[i] = len(present)
            for c in present:
                crit.append(rank[c])
                score.append(values[c])
        parts["crit"].append(np.array(crit, dtype=np.int64))
        parts["score"].append(np.array(score, dtype=np.float64))
        parts["n"].append(counts)
        parts["seconds"].append(np.array([np.nan if v is None else v for v in cols[6]], dtype=np.float64))
        # The same inference from_records applies to a column of aware datetimes.
        parts["submitted_at"].append(pd.Series(cols[7], dtype=None))
        del cols
    if not parts["judge"] or not sum(len(c) for c in parts["crit"]):
        frame = pd.DataFrame.from_records([], columns=list(JUDGMENT_FRAME_COLUMNS))
        return frame.astype(
            {
                "judge": object,
                "item": object,
                "original": object,
                "system": object,
                "is_control": bool,
                "control_kind": object,
                "criterion": object,
                "score": "int64",
                "seconds": "float64",
            }
        )
    repeats = np.concatenate(parts.pop("n"))

    def per_row(name: str) -> np.ndarray:
        return np.repeat(np.concatenate(parts.pop(name)), repeats)

    cand_ids, cand_codes = np.unique(np.concatenate(parts.pop("cand")), return_inverse=True)
    item_names = np.empty(len(cand_ids), dtype=object)
    item_names[:] = [str(c) for c in cand_ids.tolist()]
    system_kinds = [CONTROL_KIND_OF_SYSTEM_KIND.get(kind) for _name, kind in systems]
    system_names = np.empty(len(systems), dtype=object)
    system_names[:] = [name for name, _kind in systems]
    system_is_control = np.array([k is not None for k in system_kinds], dtype=bool)
    missing = _missing_like_pandas() if system_is_control.any() else None
    system_control_kind = np.empty(len(systems), dtype=object)
    system_control_kind[:] = [missing if k is None else k for k in system_kinds]
    system_codes = per_row("system")
    submitted = pd.concat(parts.pop("submitted_at"), ignore_index=True)
    criteria = np.empty(len(rank), dtype=object)
    criteria[:] = sorted(rank, key=rank.__getitem__)
    scores = np.concatenate(parts.pop("score"))
    columns = {
        "judge": _object_series(judges.values_array()[per_row("judge")]),
        "item": _object_series(item_names[np.repeat(cand_codes, repeats)]),
        "original": _object_series(originals.values_array()[per_row("original")]),
        "system": _object_series(system_names[system_codes]),
        "is_control": pd.Series(system_is_control[system_codes], copy=False),
        "control_kind": _object_series(system_control_kind[system_codes]),
        "criterion": _object_series(criteria[np.concatenate(parts.pop("crit"))]),
        # Whole numbers (points, categories, whole slider values) stay int64 as before.
        "score": pd.Series(scores.astype(np.int64) if np.all(np.mod(scores, 1) == 0) else scores, copy=False),
        "seconds": pd.Series(per_row("seconds"), copy=False),
        "submitted_at": submitted.repeat(repeats).reset_index(drop=True),
    }
    del system_codes, submitted, cand_codes
    return pd.DataFrame(columns, columns=list(JUDGMENT_FRAME_COLUMNS), copy=False)
