"""Demo hook: a small ranking study from the demo study's verses, the four versions of a verse at once.

Twelve verses of John (after those of the ESA demo, :func:`annotation.demo.demo_verses`),
all four versions of each ranked together (k = 4), one identical copy and one unrelated
verse per original as controls (each in a set with three versions); owned by the demo
researcher, judged by judge1..judge3, opened. Created once, by name
(:data:`annotation.demo.DEMO_STUDY_HOOKS`).
"""

from __future__ import annotations

from django.db import transaction

from annotation.demo import demo_study_derive, demo_verses

from ...enums import Protocol
from ...services.design import design_update
from ...services.opening import study_judging_open

RANKING_DEMO_NAME = "Demo: ranking 4 versions (Gospel of John)"
RANKING_DEMO_VERSES = slice(12, 24)
RANKING_DEMO_DESIGN = {
    "protocol": Protocol.RANKING,
    "ranking_k": 4,
    "seed": 2025,
    "control_counts": {"identical": 1, "random": 1, "unigram": 0},
}


def setup(*, study, accounts, stdout=None) -> None:
    """Create, design and open the ranking demo study from ``study`` (the demo study), once."""
    with transaction.atomic():
        ranking = demo_study_derive(
            source=study,
            accounts=accounts,
            name=RANKING_DEMO_NAME,
            participant_title="Rank the versions: Gospel of John",
            description="Ranking on 12 verses of John from the demo study: the King James Version as originals, the "
            "World English Bible and the three machine systems ranked together, four at once.",
            verses=demo_verses(source=study)[RANKING_DEMO_VERSES],
        )
        if ranking is None:
            return
        design_update(study=ranking, changes=RANKING_DEMO_DESIGN)
        summary = study_judging_open(study=ranking, user=accounts.get("researcher"))
    if stdout is not None:
        stdout.write(
            f"ranking: '{RANKING_DEMO_NAME}' opened with k = 4; {summary.judges} judges × "
            f"{summary.items} sets of 4 (with {summary.controls_created} controls)\n"
        )
