"""Agreement between annotators of the same sentence pairs (cell labels, Cohen's κ)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from metrics.core.alignment.model import Alignment

from ._shared import alignments_paired, plain, ratio
from .links import LinkCounts, LinkScores, link_counts

# =========================================================================== agreement


@dataclass(frozen=True)
class AgreementScores:
    """Agreement of two annotators who aligned the same sentence pairs.

    ``link``: annotator B's links scored with annotator A as gold (AER is not
    symmetric; swap the arguments for the other view). ``kappa``: Cohen's kappa
    over every grid cell labelled none / sure / possible; ``kappa_linked``: the
    same with two labels, linked / unlinked. ``observed`` is the share of cells
    given the same three-way label.
    """

    link: LinkScores
    kappa: float
    kappa_linked: float
    observed: float
    n_cells: int
    n_pairs: int

    def to_dict(self) -> dict:
        return plain(self)


def cell_labels_kappa(confusion: Sequence[Sequence[int]]) -> float:
    """Cohen's (1960) kappa from a square confusion matrix of label counts.

    κ = (p_o − p_e) / (1 − p_e), p_o = Σ_k C_kk / N, p_e = Σ_k (row_k / N)(col_k / N);
    NaN when p_e = 1 (both raters used one and the same label throughout), as
    ``sklearn.metrics.cohen_kappa_score`` does.
    """
    k = len(confusion)
    n = sum(sum(row) for row in confusion)
    if n == 0:
        return math.nan
    po = sum(confusion[x][x] for x in range(k)) / n
    rows = [sum(confusion[x]) / n for x in range(k)]
    cols = [sum(confusion[y][x] for y in range(k)) / n for x in range(k)]
    pe = sum(r * c for r, c in zip(rows, cols))
    if pe >= 1.0:
        return math.nan
    return (po - pe) / (1.0 - pe)


def annotator_agreement(a: Alignment | Sequence[Alignment], b: Alignment | Sequence[Alignment]) -> AgreementScores:
    """Link scores (A as gold) and Cohen's kappa over grid cells for two annotators.

    Every cell (i, j) of every pair's len1 × len2 grid is one rated unit, labelled
    0 none, 1 sure, 2 possible. Only linked cells are visited: the none/none count
    is the grid size minus the cells either annotator linked, so long sentences
    cost nothing extra. Needs the tokens (the grid size) of every pair.
    """
    pairs = alignments_paired(a, b, "first annotator's", "second annotator's")
    confusion = [[0] * 3 for _ in range(3)]
    total = LinkCounts()
    n_cells = 0
    for k, (x, y) in enumerate(pairs):
        if not (x.has_tokens or y.has_tokens):
            raise ValueError(f"pair {k}: kappa over grid cells needs the tokens (the grid size)")
        len1, len2 = (x if x.has_tokens else y).shape
        n_cells += len1 * len2
        total = total + link_counts(x, y)

        def label(al: Alignment, cell) -> int:
            return 1 if cell in al.sure else 2 if cell in al.possible else 0

        touched = x.links | y.links
        for cell in touched:
            confusion[label(x, cell)][label(y, cell)] += 1
        confusion[0][0] += len1 * len2 - len(touched)
    binary = [
        [confusion[0][0], confusion[0][1] + confusion[0][2]],
        [confusion[1][0] + confusion[2][0], sum(confusion[r][c] for r in (1, 2) for c in (1, 2))],
    ]
    observed = ratio(sum(confusion[i][i] for i in range(3)), n_cells)
    return AgreementScores(
        LinkScores.from_counts(total, len(pairs)),
        cell_labels_kappa(confusion),
        cell_labels_kappa(binary),
        observed,
        n_cells,
        len(pairs),
    )
