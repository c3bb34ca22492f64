"""The ESA page's words for its script (static/judging/esa/esa.js), shared by the item page and the training page."""

from __future__ import annotations

from django.utils.translation import gettext as _


def page_words() -> dict[str, str]:
    """The script's words, translated in the study's language (the page passes them as JSON)."""
    return {
        "minor": _("Minor"),
        "major": _("Major"),
        "delete": _("Delete"),
        "accept": _("Accept"),
        "proposed": _("Suggested"),
        "missing": _("[missing]"),
        "original": _("Original"),
        "candidate": _("Paraphrase"),
        "no_category": _("No category"),
        "no_spans": _("No error marked."),
        "score_missing": _("Set the score (0–100) before submitting."),
        "pending": _("Accept or delete every suggested span first."),
        "ready": _("Press Enter to submit."),
        "saving": _("Saving…"),
        "selected": _("Selected:"),
        "choose": _("Press 1 (minor) or 2 (major), or click a button, to mark it."),
        # announced in the page's live status line: %(text)s is the span's words
        "marked": _("Marked as %(severity)s: %(text)s"),
        "accepted": _("Accepted: %(text)s"),
        "deleted": _("Deleted: %(text)s"),
    }
