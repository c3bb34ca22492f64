"""Statistics for human and automatic paraphrase evaluation (pure Python, no Django).

The canonical data shapes are described in :mod:`metrics.core.stats.data`.  The main
entry points:

* :func:`build_report` — everything a study report needs, as a JSON-able dict;
* :func:`judge_qc` — per-judge quality control from controls, timing, straight-lining;
* :func:`simulate_judgments` — a seeded judge simulator returning the canonical frame;
* the building blocks: correlations, agreement coefficients, significance tests.
"""
