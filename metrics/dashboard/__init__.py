"""The researcher's cockpit: a live dashboard per study, the planner and the bonus rules.

``selectors`` read the live figures, ``services`` compute and cache the heavy ones
(a version stamp says when they are stale) and run the planner; ``tasks`` is the
worker's side; ``views`` and ``apis`` serve the cached copy.
"""
