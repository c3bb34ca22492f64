"""k-way ranking: the judge sees the original with k candidates of it (named 1..k by their
place on the screen) and orders them best first, ties allowed, optionally scoring each 0–100.

Its parts: :mod:`.unit` (what the protocol declares to the registry), :mod:`.services`
(sets and screen orders at opening, late judges and join-link participants, the judge's
sets as :class:`~.services.JudgeRanking` values, submission on the shared core, records,
QC and exports), :mod:`.importing` (ranking files into a study), :mod:`.views` (the
ranking page, its submit, the exports), :mod:`.apis` (the judge's rankings API),
:mod:`.urls` (their routes, mounted by ``annotation/judging/urls.py`` and ``api_urls.py``),
and the report in :mod:`.report`. Templates (``templates/judging/ranking/``)
and script (``static/judging/ranking/``) are in this package, as for every protocol.
"""
