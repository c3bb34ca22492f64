"""Demo hook: judge the demo study with PEM's defaults (fully crossed, one control of each kind)."""

from __future__ import annotations

from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open


def setup(*, study, accounts, stdout=None) -> None:
    """Save the default design with a fixed seed, open the study, build judge1..judge3's lists."""
    design_update(study=study, changes={"seed": 2010})
    summary = study_judging_open(study=study, user=accounts.get("researcher"))
    if stdout is not None:
        stdout.write(
            f"judging: opened with {summary.controls_created} controls; {summary.judges} judges × "
            f"{summary.items} items (fully crossed)\n"
        )
