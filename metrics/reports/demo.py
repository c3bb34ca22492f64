"""Demo hook: no report is built here (``make run`` stays quick); say how to get one."""

from __future__ import annotations


def setup(*, study, accounts, stdout=None) -> None:
    if stdout is not None:
        stdout.write(
            f"  reports: judge the demo study as judge1..judge3, or fill it with simulated judges "
            f"(python manage.py simulate_judges {study.pk} --judges 3 "
            f"--profile fixtures/demo/simulation_profile.json), then build the report on its Report tab\n"
        )
