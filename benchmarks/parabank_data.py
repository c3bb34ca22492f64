"""ParaBank's real human judgments as plain data (Hu, Rudinger, Post & Van Durme, AAAI 2019).

Read from ``../shared/data/parabank/`` (see its README): ``ref.tsv`` holds the 400
originals, ``candidates.tsv.xz`` 23,215 crowd judgments of candidates on a 0–100
semantic-similarity slider. :func:`load_parabank` folds them into one row per
distinct (original, candidate): the mean human score over its judgments (empty
sliders left out), the number of judgments, and the systems that produced it
(one candidate can belong to several systems: identical outputs were judged once).
"""

from __future__ import annotations

import csv
import lzma
import os
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: ``PARAEVAL_PARABANK`` overrides the folder (a git worktree's parent has no ``shared/``).
PARABANK = Path(os.environ.get("PARAEVAL_PARABANK") or REPO.parent / "shared" / "data" / "parabank")


@dataclass(frozen=True)
class ParabankItem:
    ref_id: str
    original: str
    candidate: str
    systems: tuple[str, ...]
    human: float
    n_judgments: int


def load_parabank(root: Path = PARABANK) -> list[ParabankItem]:
    """One :class:`ParabankItem` per distinct (original, candidate) with at least one score.

    Raises ``FileNotFoundError`` naming the folder when the data is absent.
    """
    ref_path, cand_path = root / "ref.tsv", root / "candidates.tsv.xz"
    if not ref_path.exists() or not cand_path.exists():
        raise FileNotFoundError(f"ParaBank judgments not found in {root} (ref.tsv, candidates.tsv.xz)")
    with open(ref_path, encoding="utf-8", newline="") as fh:
        refs = {r["ref_id"]: r["ref_sent"] for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)}
    scores: dict[tuple[str, str], list[float]] = {}
    systems: dict[tuple[str, str], set[str]] = {}
    with lzma.open(cand_path, "rt", encoding="utf-8", newline="") as fh:
        for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            key = (r["ref_id"], r["candidate"])
            systems.setdefault(key, set()).update(r["sys_id"].split())
            s = (r["human_score"] or "").strip()
            if s:
                scores.setdefault(key, []).append(float(s))
    items = []
    for key in sorted(scores, key=lambda k: (int(k[0]), k[1])):
        vals = scores[key]
        items.append(
            ParabankItem(
                ref_id=key[0],
                original=refs[key[0]],
                candidate=key[1],
                systems=tuple(sorted(systems[key], key=int)),
                human=sum(vals) / len(vals),
                n_judgments=len(vals),
            )
        )
    return items
