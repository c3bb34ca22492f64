"""Demo hook: a small error-span study from the demo study's verses, spans pre-filled by the aligner.

Twelve verses of John (the first that :func:`annotation.demo.demo_verses` lets through),
all four versions of each, one identical copy and one unrelated verse per original as
controls; owned by the demo researcher, judged by judge1..judge3, opened. Created once, by
name (:data:`annotation.demo.DEMO_STUDY_HOOKS`).
"""

from __future__ import annotations

from django.db import transaction

from annotation.demo import demo_study_derive, demo_verses

from ...enums import EsaPrefill, Protocol
from ...services.design import design_update
from ...services.opening import study_judging_open

ESA_DEMO_NAME = "Demo: error spans (ESA), Gospel of John"
ESA_DEMO_VERSES = slice(0, 12)
ESA_DEMO_DESIGN = {
    "protocol": Protocol.ESA,
    "esa_prefill": EsaPrefill.ALIGNER,
    "seed": 2024,
    "control_counts": {"identical": 1, "random": 1, "unigram": 0},
}


def setup(*, study, accounts, stdout=None) -> None:
    """Create, design and open the ESA demo study from ``study`` (the demo study), once."""
    with transaction.atomic():
        esa = demo_study_derive(
            source=study,
            accounts=accounts,
            name=ESA_DEMO_NAME,
            participant_title="Mark the errors: Gospel of John",
            description="Error span annotation on 12 verses of John from the demo study: the King James Version as "
            "originals, the World English Bible and the three machine systems as candidates, spans pre-filled by "
            "paraeval's word aligner (unaligned words as possible additions and omissions).",
            verses=demo_verses(source=study)[ESA_DEMO_VERSES],
        )
        if esa is None:
            return
        design_update(study=esa, changes=ESA_DEMO_DESIGN)
        summary = study_judging_open(study=esa, user=accounts.get("researcher"))
    if stdout is not None:
        stdout.write(
            f"error spans (ESA): '{ESA_DEMO_NAME}' opened, spans pre-filled by the aligner; "
            f"{summary.judges} judges × {summary.items} items (with {summary.controls_created} controls)\n"
        )
