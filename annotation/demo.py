"""The demo study that ``make run`` loads: accounts, the study, and each app's setup.

Other apps add to the demo through a module ``<app>.demo`` with a function
``setup(*, study, accounts, stdout)``; it is called after the study is imported,
once, in the order of ``DEMO_HOOKS``.
"""

from __future__ import annotations

import gzip
import importlib
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from . import services
from .enums import Role
from .models import Study

DEMO_STUDY_NAME = "Demo: KJV vs WEB (Gospel of John)"
DEMO_FILE = Path(settings.BASE_DIR) / "fixtures" / "demo" / "demo_study.csv.gz"
DEMO_SYSTEMS_FILE = Path(settings.BASE_DIR) / "fixtures" / "demo" / "demo_systems.csv.gz"
#: username -> (password, role in the demo study or None for the researcher/owner)
DEMO_ACCOUNTS = {
    "researcher": ("researcher-demo", Role.RESEARCHER),
    "judge1": ("judge1-demo", Role.JUDGE),
    "judge2": ("judge2-demo", Role.JUDGE),
    "judge3": ("judge3-demo", Role.JUDGE),
    "annotator": ("annotator-demo", Role.ANNOTATOR),
}
DEMO_HOOKS = ("annotation.judging.demo", "annotation.alignment.demo", "metrics.demo", "metrics.reports.demo")


def demo_accounts_ensure() -> dict[str, User]:
    users = {}
    for username, (password, role) in DEMO_ACCOUNTS.items():
        user, created = User.objects.get_or_create(username=username)
        if created:
            user.set_password(password)
            user.save()
        if role == Role.RESEARCHER:
            services.researcher_grant(user=user)
        users[username] = user
    return users


def demo_load(*, stdout=None) -> tuple[Study, bool]:
    """Create the demo accounts and study once. Returns (study, created)."""
    accounts = demo_accounts_ensure()
    existing = Study.objects.filter(name=DEMO_STUDY_NAME).first()
    if existing is not None:
        return existing, False
    with transaction.atomic():
        study = services.study_create(
            name=DEMO_STUDY_NAME, owner=accounts["researcher"],
            description="300 verses of John: the King James Version as originals; the World English Bible "
            "(an independent translation) as the human system, and three machine systems: WordNet synonyms with a "
            "context filter, an English-Spanish-English round trip through Apertium, and nearest GloVe neighbours.",
        )
        services.study_import_file(
            study=study, data=gzip.decompress(DEMO_FILE.read_bytes()), filename="demo_study.csv",
            background=False)
        # The three machine systems (fixtures/demo/build_demo_systems.py), generated once and shipped.
        services.study_import_file(
            study=study, data=gzip.decompress(DEMO_SYSTEMS_FILE.read_bytes()), filename="demo_systems.csv",
            background=False)
        for username, (_, role) in DEMO_ACCOUNTS.items():
            if role in (Role.JUDGE, Role.ANNOTATOR):
                services.study_member_add(study=study, user=accounts[username], role=role)
    for hook in DEMO_HOOKS:
        try:
            module = importlib.import_module(hook)
        except ModuleNotFoundError as exc:
            if exc.name == hook:
                continue
            raise
        module.setup(study=study, accounts=accounts, stdout=stdout)
    return study, True
