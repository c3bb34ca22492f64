"""Judging REST API: one view per operation, explicit serializers.

Judge endpoints answer only about the requesting judge's own assignment and expose
items by opaque tokens; a study the user does not judge is a 404. Researcher
endpoints need the study's researcher role (403 otherwise).

Import each view from its module (``api_urls.py``: ``from .apis import judge``, then
``judge.JudgingSubmitApi``). The modules:

* :mod:`.judge` — the judge's endpoints (next item, one item, the one before, submit);
* :mod:`.study` — the researcher's design, opening, closing and progress;
* :mod:`.results` — judge QC, exclusions, the CSV exports, importing judgments.

The schema tags and the answer to a judging error are in :mod:`annotation.judging.web`.
"""
