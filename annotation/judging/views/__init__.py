"""Judging pages: the judge's rating pages and the researcher's design, progress and QC.

Judge pages render only :class:`~annotation.judging.selectors.JudgeItem` values and
the design's criteria texts: no system, control kind, expected score or database
id of a candidate, original or system reaches the judge's browser.

Import each view from its module (``urls.py``: ``from .views import judge``, then
``judge.rate``); the helpers they share are in :mod:`annotation.judging.web` and
:mod:`annotation.web`. The modules:

* :mod:`.judge` — the judge's pages (home, rate, revise, submit, instructions, end);
* :mod:`.study` — the researcher's design, opening, closing, resetting and progress;
* :mod:`.results` — judge QC and exclusions, the CSV exports, importing judgments.
"""
