"""Side-by-side comparison: the judge sees the original with two candidates of different
systems and answers "A better", "about the same" or "B better", once overall or once per
criterion of the design.

Its parts: :mod:`.unit` (what the protocol declares to the registry), :mod:`.services`
(pairs and sides at opening, late judges and join-link participants, the judge's pairs
as :class:`~annotation.judging.selectors.judge.JudgeEntry` values, submission on the
shared core, records, QC and the CSV export), :mod:`.views` (the pair page, its submit,
the export), :mod:`.apis` (the judge's pairs API), :mod:`.urls` (their routes, mounted
by ``annotation/judging/urls.py`` and ``api_urls.py`` under stable names), and the report
in :mod:`.report`. Templates (``templates/judging/side_by_side/``) and script
(``static/judging/side_by_side/``) are in this package, as for every protocol.
"""
