"""Locust users that judge at a human pace (used by ``benchmarks/judging_pace.py``).

Each user is one judge with an API token (read from the JSON file named by
``PARAEVAL_LOCUST_TOKENS``: a list of tokens, one per user, handed out in order).
A judge loops: ``GET items/next/`` (the item), think, ``POST judgments/`` with the
four scores. The think time is log-normal with median ``PARAEVAL_THINK_MEDIAN``
seconds (default 10) and σ = ``PARAEVAL_THINK_SIGMA`` (default 0.6): most items take
5–25 s, a few much longer, as reading and rating a paraphrase pair does. Requests
are named ``items/next`` and ``submit`` in Locust's statistics.

Two user classes with the same behaviour: ``Judge`` (Locust's ``HttpUser``, the
``requests`` library) and ``FastJudge`` (``FastHttpUser``, geventhttpclient, several
times less CPU per request in the load generator). ``benchmarks/judging_pace.py``
picks one by name (``--client``); the cheaper client leaves more of a shared machine
to the server being measured.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import secrets
import threading

from locust import FastHttpUser, HttpUser

STUDY = int(os.environ.get("PARAEVAL_LOCUST_STUDY", "0"))
MEDIAN = float(os.environ.get("PARAEVAL_THINK_MEDIAN", "10"))
SIGMA = float(os.environ.get("PARAEVAL_THINK_SIGMA", "0.6"))
_TOKENS = (
    json.loads(open(os.environ["PARAEVAL_LOCUST_TOKENS"]).read()) if os.environ.get("PARAEVAL_LOCUST_TOKENS") else []
)
_NEXT = itertools.count()
_LOCK = threading.Lock()


def think_time() -> float:
    """Seconds a judge spends on one item: log-normal, median ``MEDIAN``."""
    return random.lognormvariate(math.log(MEDIAN), SIGMA)


class _JudgeBehaviour:
    """One judge's loop, shared by both user classes below."""

    def wait_time(self) -> float:
        return think_time()

    def on_start(self) -> None:
        with _LOCK:
            i = next(_NEXT)
        self.token = _TOKENS[i % len(_TOKENS)]
        self.headers = {"Authorization": f"Token {self.token}", "Accept": "application/json"}
        self.item = None
        self.n = 0

    def rate_one(self) -> None:
        """Submit the item thought about during the last wait (if any), then fetch the next:
        one think time per item."""
        if self.item is not None:
            self.n += 1
            n = self.n
            scores = {
                "adequacy": 1 + n % 5,
                "fluency": 1 + (n * 3) % 5,
                "dissimilarity": 1 + (n * 7) % 5,
                "overall": 1 + (n * 2) % 5,
            }
            payload = {
                "item": self.item["token"],
                "key": secrets.token_urlsafe(12),
                "scores": scores,
                "serve_stamp": self.item["serve_stamp"],
                "active_seconds": 8.0,
            }
            self.item = None
            with self.client.post(
                f"/api/judging/studies/{STUDY}/judgments/",
                json=payload,
                headers=self.headers,
                name="submit",
                catch_response=True,
            ) as r:
                if r.status_code != 201:
                    r.failure(f"{r.status_code}")
        with self.client.get(
            f"/api/judging/studies/{STUDY}/items/next/", headers=self.headers, name="items/next", catch_response=True
        ) as r:
            if r.status_code != 200:
                r.failure(f"{r.status_code}")
                return
            body = r.json()
            if body.get("finished"):
                self.stop()
                return
            self.item = body["item"]


class Judge(_JudgeBehaviour, HttpUser):
    """A judge on Locust's ``requests``-based client."""

    tasks = [_JudgeBehaviour.rate_one]  # Locust reads @task only from User classes, not mixins


class FastJudge(_JudgeBehaviour, FastHttpUser):
    """The same judge on ``geventhttpclient`` (Locust's ``FastHttpUser``)."""

    tasks = [_JudgeBehaviour.rate_one]
