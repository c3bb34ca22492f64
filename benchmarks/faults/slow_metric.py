"""``pinc-slow``: PINC, taking ``PARAEVAL_FAULTS_CHUNK_SECONDS`` longer per chunk.

The fault scripts kill a worker *while it scores a chunk*; with real metrics a
chunk of a small study takes milliseconds, so the moment would be luck. This metric
computes exactly PINC (``metrics.core.pinc``) and then waits, so a chunk is in
flight long enough to be killed. Registered only where the fault settings
(``benchmarks/faults/settings.py``) are loaded.
"""

from __future__ import annotations

import os
import time

from metrics.core.pinc import PincMetric
from metrics.core.registry import register


@register
class SlowPincMetric(PincMetric):
    """PINC that sleeps after scoring each chunk (fault injection only)."""

    slug = "pinc-slow"
    description = "PINC, slowed down per chunk so that a fault script can kill a worker mid-chunk."

    def segment_stats(self, originals, candidates, references=None):
        stats = super().segment_stats(originals, candidates, references)
        time.sleep(float(os.environ.get("PARAEVAL_FAULTS_CHUNK_SECONDS", "0.5")))
        return stats
