"""Adaptive allocation, an option per study: the next item a judge gets is the one whose
judgment most reduces the uncertainty of the system ranking (the math:
:mod:`metrics.core.adaptive`), and the study may stop by itself once the ranking is stable.

One hook in the judge's hot path (:func:`annotation.judging.protocols.absolute.hot_path.item_next_for_judge_fast`)
calls :func:`annotation.adaptive.services.adaptive_item_promote`; nothing else of judging changes.

Modules: ``services`` (the settings, the item swap on the hot path, asking for a refresh),
``publication`` (which studies are adaptive, published to every process through the cache),
``refresh`` (the worker's side: tallies, priorities, the stop), ``tasks``, ``selectors``, ``models``.
"""
