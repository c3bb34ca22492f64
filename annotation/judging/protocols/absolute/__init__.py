"""Absolute rating: each judge rates one (original, candidate) pair at a time on the
design's criteria and scales.

Its parts: :mod:`.models` (its tables, ``AssignmentItem`` and ``Judgment``), :mod:`.unit`
(what the protocol declares), :mod:`.services` (submission, scores), :mod:`.assignments`
(opening, late judges, join-link participants), :mod:`.views`, :mod:`.apis` and
:mod:`.urls` (the rating page and its API), :mod:`.selectors` and :mod:`.hot_path` (the
items a judge is served), :mod:`.imports`, :mod:`.screening` (the automatic QC
screen-out), :mod:`.frame` (its judgments as a frame), :mod:`.exports`,
:mod:`.simulation` (simulated judges), and :mod:`.report` (its report, dashboard figures
and tables, with :mod:`.pem_tables` and :mod:`.ranking_tables`).
"""
