"""The demo study that ``make run`` loads: accounts, the study, and each app's setup.

Other apps add to the demo through a module ``<app>.demo`` with a function
``setup(*, study, accounts, stdout)``; it is called after the study is imported,
once, in the order of ``DEMO_HOOKS``.

Protocols that need a study of their own (error spans, ranking) declare a small one on their
unit (``demo``); the hook in ``DEMO_STUDY_HOOKS`` (``module:function``, called like ``setup``)
builds each from the demo study's texts (:func:`demo_study_derive`) once, by name, and is
called on every load, so a demo loaded before a protocol existed gains its study too.
"""

from __future__ import annotations

import csv
import gzip
import importlib
import io
import re
from pathlib import Path
from typing import cast

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from annotation.services.membership import study_member_add
from annotation.services.queueing import study_import_file
from annotation.services.studies import researcher_grant, study_create

from .enums import Role
from .models import Candidate, Study

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
DEMO_STUDY_HOOKS = ("annotation.judging.demo:protocol_studies_setup",)
#: The systems of the demo study (``human`` is the WEB), in the order the derived studies list them.
DEMO_SYSTEMS = ("human", "synonyms", "pivot-mt", "embed-nn")
#: The marks every text of a derived study's verse uses, no more, no fewer: in 12 verses a
#: ";", ":" or "'" would be found in some systems' candidates only (the KJV, and so the
#: machine systems, has ";", the WEB has "'"), a tell that the 300 verses of the demo
#: study even out; with the same marks everywhere, no system can be told by one.
_PLAIN_MARKS = frozenset(" ,.")


#: Columns of the shipped demo files that hold text a judge reads.
DEMO_TEXT_COLUMNS = ("original", "candidate", "reference")
_QUOTES_DOUBLE = str.maketrans("", "", '"\u201c\u201d\u201e\u00ab\u00bb')
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:?!)])")
_DASH_BETWEEN_WORDS = re.compile(r"(?<=\w)[-\u2010\u2011](?=\w)")


def demo_text_normalise(text: str) -> str:
    """One plain typography for every demo text, so that no character tells a system apart.

    The KJV originals carry a paragraph sign "¶" that the machine systems (which
    start from the KJV) and the identical control keep and the WEB (``human``)
    never has; the WEB quotes speech with “…” and ‘…’, which the KJV and so
    every machine system lack; hyphenated compounds and dashes come from some
    systems only. A judge could tell a system by such marks alone, so every demo
    text (original, candidate, reference) is normalised the same way:

    * "¶" is dropped;
    * quotation marks are dropped (the KJV has none); a right single quote
      inside a word, or after a letter outside a quotation, is an apostrophe and
      becomes "'" (as ``pivot-mt`` already writes it);
    * a hyphen between two words becomes a space, a dash (– —) a comma;
    * spaces are collapsed and none is left before , . ; : ? ! or ).

    ``tests/test_demo_study.py`` checks that afterwards no Unicode category and no
    non-alphanumeric character occurs in some systems' candidates only.
    """
    text = text.replace("\u00b6", " ").translate(_QUOTES_DOUBLE)
    out: list[str] = []
    quote_open = False
    for k, ch in enumerate(text):
        if ch == "\u2018":  # opens a quotation inside a quotation
            quote_open = True
            continue
        if ch in "\u2019'":
            after = text[k + 1] if k + 1 < len(text) else ""
            before = text[k - 1] if k else ""
            if after.isalpha() and before.isalpha():
                out.append("'")  # don't, God's
            elif quote_open and not (after.isalpha() and not before):
                quote_open = False  # closes the quotation
            elif before.isalpha():
                out.append("'")  # Jesus' mother
            elif ch == "'" and after.isalpha():
                quote_open = True  # an ASCII quote opening a quotation
            continue
        out.append(ch)
    text = "".join(out)
    text = _DASH_BETWEEN_WORDS.sub(" ", text)
    text = re.sub(r"\s*[\u2013\u2014]\s*", ", ", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    return re.sub(r",\s*([,.;:?!])", r"\1", text)


def demo_file_normalised(path: Path) -> bytes:
    """A shipped demo CSV (gzip) with :func:`demo_text_normalise` applied to its text columns."""
    reader = csv.DictReader(io.StringIO(gzip.decompress(path.read_bytes()).decode("utf-8")))
    buf = io.StringIO()
    assert reader.fieldnames is not None  # the shipped files have a header
    writer = csv.DictWriter(buf, fieldnames=reader.fieldnames, lineterminator="\n")
    writer.writeheader()
    for row in reader:
        writer.writerow({k: demo_text_normalise(v) if k in DEMO_TEXT_COLUMNS else v for k, v in row.items()})
    return buf.getvalue().encode("utf-8")


def demo_accounts_ensure() -> dict[str, User]:
    users = {}
    for username, (password, role) in DEMO_ACCOUNTS.items():
        user, created = User.objects.get_or_create(username=username)
        if created:
            user.set_password(password)
            user.save()
        if role == Role.RESEARCHER:
            researcher_grant(user=user)
        users[username] = user
    return users


def demo_verses(*, source: Study) -> list[dict[str, str]]:
    """The verses of ``source`` (the demo study) that a small study can show, in the study's order.

    A verse qualifies when the candidates of the four :data:`DEMO_SYSTEMS` differ from one
    another and from the original (each has something to mark or to order) and each of
    the five texts uses exactly the marks space, comma and full stop (:data:`_PLAIN_MARKS`;
    70 of the 300 verses qualify). Each verse is a
    dict with ``original_id``, ``original``, ``document`` and one key per system.
    """
    verses: dict[int, dict[str, str]] = {}
    for pk, ext, original, document, system, text in (
        Candidate.objects.filter(original__study=source, system__name__in=DEMO_SYSTEMS)
        .order_by("original__position")
        .values_list(
            "original_id", "original__external_id", "original__text", "original__document", "system__name", "text"
        )
    ):
        verses.setdefault(pk, {"original_id": ext, "original": original, "document": document})[system] = text
    out = []
    for verse in verses.values():
        texts = [verse.get(s) for s in DEMO_SYSTEMS]
        if None in texts or len({*texts, verse["original"]}) != len(texts) + 1:
            continue
        # No None in texts (skipped above), which mypy cannot infer from `None in texts`.
        if all(set(re.sub(r"\w", "", t)) == _PLAIN_MARKS for t in [*cast(list[str], texts), verse["original"]]):
            out.append(verse)
    return out


def demo_study_derive(
    *,
    source: Study,
    accounts: dict[str, User],
    name: str,
    participant_title: str,
    description: str,
    verses: list[dict[str, str]],
) -> Study | None:
    """A new study ``name`` owned by the demo researcher, with ``verses`` (from
    :func:`demo_verses`) and every system's candidate of each, and the demo judges as its
    judges; still a draft, for the caller to design and open. ``None`` (nothing written)
    when a study of that name exists. Runs inside the caller's transaction."""
    if Study.objects.filter(name=name).exists():
        return None
    study = study_create(
        name=name, owner=accounts["researcher"], description=description, participant_title=participant_title
    )
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["original_id", "original", "system", "candidate", "document"])
    for verse in verses:
        for system in DEMO_SYSTEMS:
            writer.writerow([verse["original_id"], verse["original"], system, verse[system], verse["document"]])
    study_import_file(
        study=study, data=buf.getvalue().encode("utf-8"), filename=f"{source.pk}-subset.csv", background=False
    )
    for username, (_, role) in DEMO_ACCOUNTS.items():
        if role == Role.JUDGE:
            study_member_add(study=study, user=accounts[username], role=role)
    return study


def _hooks_run(hooks: tuple[str, ...], *, study: Study, accounts: dict[str, User], stdout) -> None:
    for hook in hooks:  # "module" (its setup) or "module:function"
        name, _, function = hook.partition(":")
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        getattr(module, function or "setup")(study=study, accounts=accounts, stdout=stdout)


def demo_load(*, stdout=None) -> tuple[Study, bool]:
    """Create the demo accounts and study once, and the protocols' small studies (each once).
    Returns (the demo study, whether it was created now)."""
    accounts = demo_accounts_ensure()
    existing = Study.objects.filter(name=DEMO_STUDY_NAME).first()
    if existing is not None:
        _hooks_run(DEMO_STUDY_HOOKS, study=existing, accounts=accounts, stdout=stdout)
        return existing, False
    with transaction.atomic():
        study = study_create(
            name=DEMO_STUDY_NAME,
            owner=accounts["researcher"],
            description="300 verses of John: the King James Version as originals; the World English Bible "
            "(an independent translation) as the human system, and three machine systems: WordNet synonyms with a "
            "context filter, an English-Spanish-English round trip through Apertium, and nearest GloVe neighbours.",
        )
        # Texts are normalised as they are loaded (demo_text_normalise): the shipped files stay
        # what the build scripts wrote, so fixtures/demo/build_demo_systems.py stays reproducible.
        study_import_file(
            study=study, data=demo_file_normalised(DEMO_FILE), filename="demo_study.csv", background=False
        )
        # The three machine systems (fixtures/demo/build_demo_systems.py), generated once and shipped.
        study_import_file(
            study=study, data=demo_file_normalised(DEMO_SYSTEMS_FILE), filename="demo_systems.csv", background=False
        )
        for username, (_, role) in DEMO_ACCOUNTS.items():
            if role in (Role.JUDGE, Role.ANNOTATOR):
                study_member_add(study=study, user=accounts[username], role=role)
    _hooks_run(DEMO_HOOKS, study=study, accounts=accounts, stdout=stdout)
    _hooks_run(DEMO_STUDY_HOOKS, study=study, accounts=accounts, stdout=stdout)
    return study, True
