"""The metric object of a run, built once per worker process and cached.

Every chunk of a run that lands on the same worker process reuses one instance (its
resources load lazily and can take seconds).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

from metrics.core.base.metric import Metric
from metrics.core.registry import create_metric

from ..models import MetricRun
from ._shared import resource_paths

_CACHE_SIZE = 4
metric_cache: OrderedDict[tuple, Metric] = OrderedDict()
_metric_cache_lock = threading.Lock()


def metric_for_run(run: MetricRun) -> Metric:
    """The metric object of ``run``, cached per worker process.

    Resources (phrase tables, language models, vectors) load lazily inside the
    metric object and can take seconds, so every chunk of a run that lands on
    the same worker process reuses one instance. Uploaded resource files never
    change (their SHA-256 is fixed at upload), so the key is safe.
    """
    key = (run.metric, json.dumps(run.params, sort_keys=True), json.dumps(run.resources, sort_keys=True))
    with _metric_cache_lock:
        metric = metric_cache.get(key)
        if metric is not None:
            metric_cache.move_to_end(key)
            return metric
    metric = create_metric(run.metric, run.params, resource_paths(run.resources))
    with _metric_cache_lock:
        metric_cache[key] = metric
        while len(metric_cache) > _CACHE_SIZE:
            metric_cache.popitem(last=False)
    return metric
