"""Absolute rating: each judge rates one (original, candidate) pair at a time on the
design's criteria and scales.

Its parts: :mod:`.models` (its tables, ``AssignmentItem`` and ``Judgment``), :mod:`.unit`
(what the protocol declares), :mod:`.services` (assignments: opening, late judges,
join-link participants). Its pages, API, submission, QC, report
and exports are the judging app's own (``annotation/judging/views``, ``apis``,
``services.submission``, ``screening``, ``metrics.reports``), the first protocol
paraeval had; the unit names them.
"""
