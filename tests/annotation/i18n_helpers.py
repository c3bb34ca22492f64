"""What the language tests share (test_i18n*.py): the shipped languages and the words each
page must show in them, and the check that no English UI text is left on a page once the
study's own texts are taken out. The fixtures (lang, translated_study) are in conftest.py."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from django.contrib.auth.models import User

from annotation.alignment.models import AlignmentPair
from annotation.judging.selectors.design import study_criteria
from annotation.judging.web import criteria_for_judge

SECOND = "es"
#: Per shipped language: the page's <html> tag and a few translations each page must show.
SHIPPED = {
    "es": {
        "html": '<html lang="es" dir="ltr">',
        "instructions": "Evalúe cada par",
        "rate-error": "Dé a cada criterio un valor en su escala.",
        "rate": 'data-msg-missing="Primero dé un valor a cada criterio."',
        "home-status": "Sin empezar",
        "grid": 'data-msg-draft-saved="Borrador guardado"',
        "submitted": "enviada. Aquí tiene su siguiente par.",
        "judge-home": "Sus evaluaciones",
    },
    "ar": {
        "html": '<html lang="ar" dir="rtl">',
        "instructions": "قيّم كل زوج",
        "rate-error": "أعطِ كل معيار قيمة على مقياسه.",
        "rate": 'data-msg-missing="أعطِ كل معيار قيمة أولًا."',
        "home-status": "لم يبدأ",
        "grid": 'data-msg-draft-saved="حُفظت المسودة"',
        "submitted": "هذا زوجك التالي.",
        "judge-home": "عملك في التقييم",
    },
}

#: Words of English UI text that are not Spanish words: one left outside the data means an unmarked string.
ENGLISH_MARKERS = frozenset(
    """
the your you and of to is are this with pair pairs rate rated rating item items submit back next previous
sentence sentences words link links saved how keys done log out skip content study studies guidelines alignment
tasks grid click drag undo redo clear instructions change changes save start continue review paraphrase context
ended started yet not set every criterion value
""".split()
)

# --- rendering the pages in the study's language ---------------------------------------------------


class _Text(HTMLParser):
    """Visible text and the attributes a person reads (labels, titles, script messages), minus
    <script>, <style> and the quoted English example words of the alignment guidelines (<q>, <kbd>)."""

    SKIP = {"script", "style", "q", "kbd"}
    ATTRS = {"aria-label", "title", "placeholder", "alt", "aria-valuetext"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.chunks: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self._skip += 1
        for name, value in attrs:
            if value and (name in self.ATTRS or name.startswith("data-msg-")):
                self.chunks.append(value)

    def handle_endtag(self, tag):
        if tag in self.SKIP:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip and data.strip():
            self.chunks.append(data.strip())


def english_left(html: str, data: set[str]) -> list[str]:
    """The English UI words of ``html`` once the study's own texts (``data``) are taken out."""
    parser = _Text()
    parser.feed(html)
    found = []
    long_data = sorted((d for d in data if len(d) >= 12), key=len, reverse=True)
    for chunk in parser.chunks:
        if chunk in data:
            continue
        for d in long_data:
            chunk = chunk.replace(d, " ")
        chunk = re.sub(r"\{\w+\}", " ", chunk)  # a script message's placeholders ({name}, {words}) are code
        words = re.findall(r"[A-Za-z]+", chunk)
        found += [f"{w!r} in {chunk!r}" for w in words if w.lower() in ENGLISH_MARKERS]
    return found


def study_data(study) -> set[str]:
    """Everything the researcher wrote or imported: shown as written, never translated."""
    from annotation.models import Candidate, Original

    data = {study.participant_title, "paraeval"}
    data |= set(Original.objects.filter(study=study).values_list("text", flat=True))
    data |= set(Candidate.objects.filter(original__study=study).values_list("text", flat=True))
    for c in criteria_for_judge(study_criteria(study=study)):
        data |= {c["name"], c["help"], c.get("low", ""), c.get("mid", ""), c.get("high", "")}
        data |= {p["label"] for p in c["points"]}
    for pair in AlignmentPair.objects.filter(study=study):
        data |= {pair.text1, pair.text2, *pair.tokens1, *pair.tokens2}
    for user in User.objects.all():
        data.add(user.username)
    return {d for d in data if d}
