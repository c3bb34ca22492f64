"""Demo hooks of judging: judge the demo study with PEM's defaults (fully crossed, one control
of each kind), and give each protocol that declares a demo study (its unit's ``demo``) that
study, made from the demo study's texts."""

from __future__ import annotations

from django.db import transaction

from annotation.demo import demo_study_derive, demo_verses
from annotation.judging.protocols.registry import protocols_all
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


def protocol_studies_setup(*, study, accounts, stdout=None) -> None:
    """Each registered protocol's demo study (:class:`~annotation.judging.protocols.base.DemoStudy`)
    from ``study`` (the demo study): created, designed and opened once, by name."""
    for unit in protocols_all():
        demo = unit.demo
        if demo is None:
            continue
        with transaction.atomic():
            derived = demo_study_derive(
                source=study,
                accounts=accounts,
                name=demo.name,
                participant_title=demo.participant_title,
                description=demo.description,
                verses=demo_verses(source=study)[demo.verses],
            )
            if derived is None:  # made by an earlier load
                continue
            design_update(study=derived, changes=dict(demo.design))
            summary = study_judging_open(study=derived, user=accounts.get("researcher"))
        if stdout is not None:
            said = demo.said.format(
                name=demo.name, judges=summary.judges, items=summary.items, controls=summary.controls_created
            )
            stdout.write(said + "\n")
