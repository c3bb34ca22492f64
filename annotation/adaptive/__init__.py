"""Adaptive allocation, an option per study: the next item a judge gets is the one whose
judgment most reduces the uncertainty of the system ranking (the math:
:mod:`metrics.core.adaptive`), and the study may stop by itself once the ranking is stable.

One hook in the judge's hot path (:func:`annotation.judging.selectors.hot_path.item_next_for_judge_fast`)
calls :func:`annotation.adaptive.services.adaptive_item_promote`; nothing else of judging changes.
"""
