"""Slug → paraphraser class, and the functions that look one up, build one or list them all."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import Paraphraser, ParaphraserError, ParaphraserInfo
from .apertium import ApertiumRoundTripParaphraser
from .embedding import PG1Paraphraser, PG2Paraphraser, PG3Paraphraser
from .wordnet import WordNetParaphraser
from .wordnet_context import WordNetContextParaphraser

# --------------------------------------------------------------------------- registry

_REGISTRY: dict[str, type[Paraphraser]] = {
    cls.slug: cls
    for cls in (
        PG1Paraphraser,
        PG2Paraphraser,
        PG3Paraphraser,
        WordNetParaphraser,
        WordNetContextParaphraser,
        ApertiumRoundTripParaphraser,
    )
}


def get_paraphraser(slug: str) -> type[Paraphraser]:
    """The paraphraser class registered under ``slug``; :class:`ParaphraserError` lists the known ones."""
    try:
        return _REGISTRY[slug]
    except KeyError:
        raise ParaphraserError(f"unknown paraphraser {slug!r}; known: {', '.join(_REGISTRY)}") from None


def create_paraphraser(
    slug: str, params: Mapping[str, Any] | None = None, *, seed: int = 0, **resources: Any
) -> Paraphraser:
    """An instance of paraphraser ``slug`` with ``params`` and ``seed`` (resources as keyword arguments)."""
    return get_paraphraser(slug)(params, seed=seed, **resources)


def paraphraser_info(slug: str) -> ParaphraserInfo:
    """Slug, description, parameters and availability of one paraphraser."""
    cls = get_paraphraser(slug)
    reason = cls().unavailable_reason()
    return ParaphraserInfo(slug, cls.description, tuple(cls.params.values()), not reason, reason)


def available_paraphrasers() -> list[ParaphraserInfo]:
    """Every registered paraphraser in registry order, each saying whether it can run here."""
    return [paraphraser_info(slug) for slug in _REGISTRY]
