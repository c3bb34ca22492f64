"""Reads for judging: a judge's items (blinded), progress, the canonical judgments
frame, exclusions, QC and exports.

What a judge receives is built only by :func:`~.judge.item_next_for_judge`,
:func:`~.judge.item_for_judge` and :func:`~.judge.item_previous_for_judge` (and their fast
twins in :mod:`.hot_path`) as :class:`~.judge.JudgeItem` values, which hold texts, positions
and opaque tokens — never a system, a control kind, an expected score or a database id.

This package itself exports nothing: import each name from the module that defines it,
e.g. ``from annotation.judging.selectors.frame import judgments_frame``. Its modules:

* :mod:`.judge` — the judge's side through the ORM (items, the one before, their studies);
* :mod:`.hot_path` — the judge's hot path in fixed SQL (``items/next``, the submit's answer);
* :mod:`.design` — the design, the criteria and the controls' expected values;
* :mod:`.exclusions` — excluded and screened-out judges;
* :mod:`.progress` — progress per judge and per system;
* :mod:`.frame` — the canonical judgments frame;
* :mod:`.qc` — quality control per judge and the judgments' fingerprint;
* :mod:`.export_rows` — the rows of the tidy and wide CSV exports.

A test or benchmark that changes a module constant (``FRAME_CHUNK_SIZE``,
``EXPORT_CHUNK_SIZE``) sets it on the module that reads it (:mod:`.frame`,
:mod:`.export_rows`).
"""
