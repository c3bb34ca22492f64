"""Which studies hand items out adaptively, published to every process through Django's cache.

The judge's hot path reads only this (:func:`adaptive_study`, at most one cache lookup a second per
process); every change of a setting, every refresh of the priorities and every poll of a dashboard
publishes the list again (:func:`adaptive_publish`). The database is what the list is made of: when
the cache has lost it, the next read rebuilds it from there (:func:`adaptive_studies`)."""

from __future__ import annotations

import math
import time

from django.core.cache import cache

#: The Django cache key of the adaptive studies (study id → priorities, window, last refresh).
CACHE_KEY = "paraeval:adaptive-studies"


#: How long one process reuses what it read from the cache (saves unpickling it on every request).
MEMO_SECONDS = 1.0


_MEMO: dict[str, object] = {"at": -math.inf, "studies": {}}


def _adaptive_from_database() -> dict[int, dict]:
    from .models import AdaptiveAllocation

    return {
        sid: {"priorities": p or {}, "window": w, "refreshed_at": r}
        for sid, p, w, r in AdaptiveAllocation.objects.filter(enabled=True, stopped_at__isnull=True).values_list(
            "study_id", "priorities", "window", "refreshed_at"
        )
    }


def adaptive_publish() -> dict[int, dict]:
    """Write the list of adaptive studies (and their priorities) to Django's cache; return it.

    The judge's hot path reads only this cache entry (the database only when the entry is
    missing), so a study without the option pays one cache lookup. Every change of a setting, every refresh of
    the priorities and every poll of a dashboard publishes it again; with a cache per
    process (the default, ``CACHE_URL`` unset) the processes that did so know the list,
    so a site with several web processes sets ``CACHE_URL`` (see docs/dashboard.md).
    """
    studies = _adaptive_from_database()
    cache.set(CACHE_KEY, studies, timeout=None)
    _MEMO.update(at=time.monotonic(), studies=studies)
    return studies


def adaptive_cache_clear() -> None:
    """Forget the published list (tests)."""
    cache.delete(CACHE_KEY)
    _MEMO.update(at=-math.inf, studies={})


def adaptive_memo_forget() -> None:
    """Forget what this process last read from the cache, as it does by itself after
    :data:`MEMO_SECONDS` (tests: the next read goes to the cache)."""
    _MEMO.update(at=-math.inf, studies={})


def adaptive_studies() -> dict[int, dict]:
    """The published adaptive studies (study id → priorities, window, last refresh), cached per process.

    A cache without the entry (a cache server restarted empty, an entry evicted, a fresh
    per-process cache) is not "no adaptive studies": the list is read from the database and
    published again (``add``, so that a publication made meanwhile is not overwritten with an
    older list). Published, even an empty list is an entry, so a site without adaptive studies
    reads the database at most once per cache loss.
    """
    now = time.monotonic()
    if now - float(_MEMO["at"]) > MEMO_SECONDS:  # type: ignore[arg-type]
        studies = cache.get(CACHE_KEY)
        if studies is None:
            studies = _adaptive_from_database()
            if not cache.add(CACHE_KEY, studies, timeout=None):
                studies = cache.get(CACHE_KEY, studies)
        _MEMO.update(at=now, studies=studies)
    return _MEMO["studies"]  # type: ignore[return-value]


def adaptive_refresh_mark(study_id: int, at) -> None:
    """Publish that ``study_id``'s refresh was asked for ``at``, so that other requests wait for it."""
    studies = adaptive_studies()
    if study_id in studies:
        studies[study_id]["refreshed_at"] = at
        cache.set(CACHE_KEY, studies, timeout=None)
        _MEMO.update(at=time.monotonic(), studies=studies)


def adaptive_study(study_id: int) -> bool:
    """Whether ``study_id`` hands items out adaptively now (cached per process; the hot path's test)."""
    return study_id in adaptive_studies()
