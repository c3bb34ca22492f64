"""Languages: the shipped catalogs are complete and compiled, Django serves them, and no judge-
or annotator-facing string is left unmarked (the pages themselves: test_i18n_pages.py and
test_i18n_participant_pages.py)."""

from __future__ import annotations

import gettext
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.utils import translation

from tests.annotation.i18n_helpers import SHIPPED

pytestmark = pytest.mark.django_db

LOCALE = Path(settings.BASE_DIR) / "locale"
PO_FILES = sorted(LOCALE.glob("*/LC_MESSAGES/django.po"))

# --- the catalogs --------------------------------------------------------------------------


def _catalog(entries) -> dict:
    out = {}
    for e in entries:
        if e.obsolete or "fuzzy" in e.flags or not e.msgid:
            continue
        out[(e.msgctxt, e.msgid)] = (
            tuple(e.msgstr_plural[k] for k in sorted(e.msgstr_plural)) if e.msgid_plural else e.msgstr
        )
    return out


def test_the_shipped_languages_are_offered_and_have_catalogs():
    for lang in SHIPPED:
        assert lang in dict(settings.LANGUAGES)
        assert (LOCALE / lang / "LC_MESSAGES" / "django.po") in PO_FILES
    assert translation.get_language_info("ar")["bidi"] is True


@pytest.mark.parametrize("po_path", PO_FILES, ids=lambda p: p.parent.parent.name)
def test_every_string_is_translated_and_the_committed_mo_matches_the_po(po_path):
    """Fails when a .po changed without `make compilemessages` (the .mo is what Django reads)."""
    po = polib.pofile(str(po_path))
    assert po.untranslated_entries() == [] and po.fuzzy_entries() == []
    mo_path = po_path.with_suffix(".mo")
    assert mo_path.exists(), f"{mo_path} is missing: run make compilemessages"
    assert _catalog(polib.mofile(str(mo_path))) == _catalog(po), (
        f"{mo_path} is stale: run make compilemessages and commit it"
    )


@pytest.mark.parametrize("po_path", PO_FILES, ids=lambda p: p.parent.parent.name)
def test_django_serves_the_committed_translations(po_path):
    lang = po_path.parent.parent.name
    po = polib.pofile(str(po_path))
    # The catalog's own plural rule (Arabic has six forms) says which form n takes.
    plural_form = gettext.c2py(re.search(r"plural=(.*?);?$", po.metadata["Plural-Forms"]).group(1))
    with translation.override(lang):
        for e in po.translated_entries():
            if e.msgid_plural:
                for n in (1, 2, 5, 11, 100):
                    got = (
                        translation.npgettext(e.msgctxt, e.msgid, e.msgid_plural, n)
                        if e.msgctxt
                        else (translation.ngettext(e.msgid, e.msgid_plural, n))
                    )
                    assert got == e.msgstr_plural[plural_form(n)], (e.msgid, n)
            else:
                got = translation.pgettext(e.msgctxt, e.msgid) if e.msgctxt else translation.gettext(e.msgid)
                assert got == e.msgstr, e.msgid


@pytest.mark.parametrize("po_path", PO_FILES, ids=lambda p: p.parent.parent.name)
def test_translations_keep_every_placeholder(po_path):
    pattern = re.compile(r"%\(\w+\)s|\{\w+\}|</?\w+[^>]*>")
    for e in polib.pofile(str(po_path)).translated_entries():
        targets = list(e.msgstr_plural.values()) if e.msgid_plural else [e.msgstr]
        for t in targets:
            assert sorted(set(pattern.findall(t))) == sorted(set(pattern.findall(e.msgid))), e.msgid


#: What `make messages` skips (Makefile, I18N_IGNORE): none of it is a judge's or annotator's page.
_NOT_SCANNED = {".git", ".venv", "var", "tests", "benchmarks", "docs", "site", "static", "fixtures", "locale"}


@pytest.mark.skipif(shutil.which("xgettext") is None, reason="needs Debian's gettext (xgettext, msgmerge)")
def test_the_catalogs_hold_exactly_the_strings_marked_in_the_code(tmp_path):
    """Fails when a string was marked (or unmarked) without `make messages`: runs makemessages on
    a copy of the sources, so the repository's catalogs are not touched."""
    base = Path(settings.BASE_DIR)

    def ignore(directory, names):
        top = Path(directory) == base
        return {
            n
            for n in names
            if (top and n in _NOT_SCANNED)
            or n == "__pycache__"
            or (Path(directory, n).is_file() and not n.endswith((".py", ".html", ".txt")))
        }

    shutil.copytree(base, tmp_path / "src", ignore=ignore)
    shutil.copytree(LOCALE, tmp_path / "src" / "locale")
    langs = [p.parent.parent.name for p in PO_FILES]
    subprocess.run(
        [
            sys.executable,
            "manage.py",
            "makemessages",
            "--no-location",
            "--no-obsolete",
            *[f"-l{lang}" for lang in langs],
        ],
        cwd=tmp_path / "src",
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "src")},
    )
    for po_path in PO_FILES:
        fresh = polib.pofile(str(tmp_path / "src" / po_path.relative_to(base)))
        committed = polib.pofile(str(po_path))
        ids = lambda po: {(e.msgctxt, e.msgid) for e in po if not e.obsolete}  # noqa: E731
        assert ids(fresh) == ids(committed), f"{po_path}: run make messages, translate, make compilemessages"
