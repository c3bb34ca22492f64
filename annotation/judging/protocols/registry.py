"""The registry of judging protocols: slug → unit (:class:`~.base.JudgingProtocol`).

The one place that reads a design's ``protocol`` field: everyone else asks
:func:`protocol_for_study`, :func:`protocol_for_design` or :func:`protocol_for_result`
for the unit and then asks the unit. A new protocol is a package beside
:mod:`.absolute` and :mod:`.side_by_side` whose ``unit`` module calls :func:`register`,
plus one line in :data:`BUILTIN_MODULES` (units are loaded on first use, so the
services the units call may import this module without a cycle).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any, TypeVar

from annotation.models import Study

from ..models import JudgingDesign
from .base import DEFAULT_PROTOCOL, JudgingProtocol, study_protocol_slug

#: The units' modules, in the order the design page offers them.
BUILTIN_MODULES = (
    "annotation.judging.protocols.absolute.unit",
    "annotation.judging.protocols.side_by_side.unit",
    "annotation.judging.protocols.esa.unit",
    "annotation.judging.protocols.ranking.unit",
)

_REGISTRY: dict[str, JudgingProtocol] = {}


UnitT = TypeVar("UnitT", bound=JudgingProtocol)


def register(unit: UnitT) -> UnitT:
    """Add ``unit`` under its slug (a second unit with the same slug is refused)."""
    if not unit.slug:
        raise ValueError(f"{unit!r} has no slug")
    if _REGISTRY.get(unit.slug, unit) is not unit:
        raise ValueError(f"a protocol {unit.slug!r} is registered already")
    _REGISTRY[unit.slug] = unit
    return unit


def unregister(unit: JudgingProtocol) -> None:
    """Remove ``unit`` (registered by :func:`register`); for tests that register a unit of
    their own (the conformance suite's probe), so that it does not outlive them. A unit not
    registered, or another unit under the same slug, is left alone."""
    if _REGISTRY.get(unit.slug) is unit:
        del _REGISTRY[unit.slug]


def _loaded() -> dict[str, JudgingProtocol]:
    if len(_REGISTRY) < len(BUILTIN_MODULES):
        for name in BUILTIN_MODULES:
            import_module(name)
    return _REGISTRY


def protocols_all() -> list[JudgingProtocol]:
    """Every registered protocol, in :data:`BUILTIN_MODULES` order."""
    return list(_loaded().values())


def protocol_get(slug: str) -> JudgingProtocol:
    """The unit registered as ``slug``; KeyError names the known ones."""
    units = _loaded()
    if slug not in units:
        raise KeyError(f"unknown judging protocol {slug!r}; the protocols are {', '.join(units)}")
    return units[slug]


def protocol_for_design(design: JudgingDesign | None) -> JudgingProtocol:
    """The unit of ``design`` (the default protocol when there is no design yet)."""
    return protocol_get(design.protocol if design is not None else DEFAULT_PROTOCOL)


def protocol_for_study(*, study: Study) -> JudgingProtocol:
    """The unit of ``study``'s design (one small query)."""
    return protocol_get(study_protocol_slug(study))


def protocol_and_design(*, study_id: int) -> tuple[JudgingProtocol, JudgingDesign | None]:
    """The unit of study ``study_id`` and its design (None before a design is saved: the
    default protocol's unit), in one query."""
    design = JudgingDesign.objects.filter(study_id=study_id).first()
    return protocol_for_design(design), design


def protocol_for_result(result: Mapping[str, Any] | None) -> JudgingProtocol:
    """The unit whose report produced ``result`` (a report's stored JSON, which names it)."""
    slug = (result or {}).get("protocol") or DEFAULT_PROTOCOL
    return protocol_get(slug)


def protocol_choices() -> list[tuple[str, str]]:
    """(slug, label) of every protocol, for the design form and API."""
    return [(u.slug, u.label) for u in protocols_all()]


def study_judgments_exist(*, study: Study) -> bool:
    """Whether ``study`` holds a judgment in any protocol's table (a guard must not trust the
    design's protocol alone: imported or earlier judgments may sit in another table)."""
    return any(unit.judgments_exist(study=study) for unit in protocols_all())
