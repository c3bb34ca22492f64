"""Error Span Annotation (ESA): the judge marks the wrong spans of a candidate (and what it
leaves out of the original), each minor or major, then scores it 0–100 (Kocmi et al. 2024).

Its parts: :mod:`.unit` (what the protocol declares to the registry), :mod:`.services`
(items and proposals at opening, late judges and join-link participants, the judge's items
as :class:`~.services.JudgeEsaItem` values, span checks and submission on the shared core,
annotations for the report, QC and the exports), :mod:`.views` (the judge's page, its
submit, the exports), :mod:`.apis` (the judge's ESA API), :mod:`.urls` (their routes,
mounted by ``annotation/judging/urls.py`` and ``api_urls.py``), and the report in
:mod:`.report`. Templates (``templates/judging/esa/``) and script
(``static/judging/esa/``) are in this package, as for every protocol.
"""
