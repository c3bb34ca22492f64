"""Reads for judging that every protocol shares: a judge's studies and places among the
attention checks, the judged study and assignment on the hot path, progress, exclusions, QC
and the exports.

What a judge receives is built in each protocol's package (the absolute protocol's
``JudgeItem`` in :mod:`annotation.judging.protocols.absolute.selectors`, its hot path in
:mod:`annotation.judging.protocols.absolute.hot_path`): texts, positions and opaque tokens —
never a system, a control kind, an expected score or a database id. The absolute protocol's
canonical judgments frame is :mod:`annotation.judging.protocols.absolute.frame`.

This package itself exports nothing: import each name from the module that defines it,
e.g. ``from annotation.judging.selectors.exclusions import judges_excluded``. Its modules:

* :mod:`.judge` — the judge's side every protocol shares (the entry's fields, places and
  progress among the attention checks, the judge's studies);
* :mod:`.hot_path` — the judged study and the judge's assignment in fixed SQL;
* :mod:`.design` — the design, the criteria and the controls' expected values;
* :mod:`.exclusions` — excluded and screened-out judges;
* :mod:`.progress` — progress per judge and per system;
* :mod:`.qc` — quality control per judge and the judgments' fingerprint;
* :mod:`.export_rows` — the tidy and wide CSV exports (the protocol's own rows, or the
  shared rows of its answers).

A test or benchmark that changes a module constant (``FRAME_CHUNK_SIZE``,
``EXPORT_CHUNK_SIZE``) sets it on the module that reads it
(:mod:`annotation.judging.protocols.absolute.frame`,
:mod:`annotation.judging.protocols.absolute.exports`).
"""
