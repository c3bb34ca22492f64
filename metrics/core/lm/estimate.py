"""Modified Kneser-Ney estimation (Chen & Goodman 1998) of an n-gram model, written as ARPA."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from metrics.core.compressed import open_resource
from metrics.core.text import tokenize

BOS, EOS, UNK = "<s>", "</s>", "<unk>"


#: Bump when estimation can change a probability (names cached ARPA files).
LM_VERSION = "mkn-1"


FALLBACK_DISCOUNTS = (0.5, 1.0, 1.5)


_LOG10_ZERO = -99.0  # ARPA convention for "never predicted" (<s>)


def lm_tokens(sentence: str, *, lowercase: bool = True) -> list[str]:
    """Tokens an LM sees for a sentence: :func:`text.tokenize`, lower-cased by default."""
    return tokenize(sentence, lowercase=lowercase)


def read_sentences(path: str | Path) -> Iterable[list[str]]:
    """Yield the space-separated tokens of each non-empty line of a text file (plain, .gz, .xz, .bz2, .zip).

    Raises :class:`~metrics.core.compressed.DecompressedTooLarge` when a compressed
    file expands past the cap."""
    path = Path(path)
    # Decompressed through the cap (compressed.open_resource): a training text is user-supplied.
    with open_resource(path, "rt") as fh:
        for line in fh:
            toks = line.split()
            if toks:
                yield toks


def modified_kn_discounts(counts_of_counts: Sequence[int]) -> tuple[float, float, float] | None:
    """(D1, D2, D3+) of Chen & Goodman (1998, eq. 26) from n1..n4, or None when undefined.

    Y = n1 / (n1 + 2 n2); D1 = 1 − 2Y n2/n1; D2 = 2 − 3Y n3/n2; D3+ = 3 − 4Y n4/n3.
    Undefined when any n_k is 0 or a discount leaves (0, k].
    """
    n1, n2, n3, n4 = (int(x) for x in counts_of_counts)
    if min(n1, n2, n3, n4) <= 0:
        return None
    y = n1 / (n1 + 2 * n2)
    d = (1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3)
    if not all(0 < dk <= k for k, dk in enumerate(d, 1)):
        return None
    return d


@dataclass
class KneserNeyModel:
    """An estimated interpolated modified-KN model in backoff form.

    ``tables[n - 1]`` is a DataFrame of every n-gram: integer word columns
    ``w0 … w{n-1}``, ``logp`` (log10 p(w | h)) and ``bow`` (log10 γ of the n-gram
    as a context; 0.0 when it has no continuation or n is the highest order).
    ``vocab[i]`` is the word of id i (0 = ``<s>``, 1 = ``</s>``, 2 = ``<unk>``).
    """

    order: int
    vocab: list[str]
    tables: list[pd.DataFrame]
    discounts: list[tuple[float, float, float]]
    fallback_orders: list[int] = field(default_factory=list)
    _lookup: list[dict] | None = field(default=None, repr=False)
    _ids: dict[str, int] | None = field(default=None, repr=False)

    # -- querying: the model's own backoff arithmetic, independent of KenLM --
    def _prepare(self) -> tuple[dict[str, int], list[dict]]:
        """Build the lookup tables on first use; return ``(word ids, n-gram tables)``."""
        if self._lookup is None or self._ids is None:
            self._ids = {w: i for i, w in enumerate(self.vocab)}
            self._lookup = []
            for n, df in enumerate(self.tables, 1):
                keys = zip(*(df[f"w{k}"].tolist() for k in range(n)))
                self._lookup.append(dict(zip(keys, zip(df["logp"].tolist(), df["bow"].tolist()))))
        return self._ids, self._lookup

    def word_id(self, word: str) -> int:
        """Id of ``word``; unknown words map to ``<unk>``."""
        ids, _ = self._prepare()
        return ids.get(word, 2)

    def logprob(self, word: str, context: Sequence[str] = ()) -> float:
        """log10 p(word | context): the longest stored n-gram times the skipped contexts' γ."""
        self._prepare()
        ids = tuple(self.word_id(t) for t in context)
        ids = ids[max(0, len(ids) - (self.order - 1)) :] if self.order > 1 else ()
        return self._logprob_ids(self.word_id(word), ids)

    def _logprob_ids(self, w: int, ctx: tuple[int, ...]) -> float:
        _, lookup = self._prepare()
        total_bow = 0.0
        for k in range(len(ctx), -1, -1):
            h = ctx[len(ctx) - k :]
            hit = lookup[k].get(h + (w,))
            if hit is not None:
                return total_bow + hit[0]
            hb = lookup[k - 1].get(h) if k > 0 else None
            if hb is not None:
                total_bow += hb[1]
        raise KeyError(w)  # unreachable: every id is a unigram

    def sentence_logprob(self, tokens: Sequence[str]) -> float:
        """log10 Pr(<s> tokens </s>) = Σ log10 p(w_i | history), </s> included."""
        self._prepare()
        ids = [0] + [self.word_id(t) for t in tokens] + [1]
        total = 0.0
        for i in range(1, len(ids)):
            total += self._logprob_ids(ids[i], tuple(ids[max(0, i - self.order + 1) : i]))
        return total

    # -- ARPA ---------------------------------------------------------------
    def write_arpa(self, path: str | Path) -> Path:
        """Write the model as an ARPA file (log10 probabilities and backoffs, 7 significant digits)."""
        path = Path(path)
        words = np.array(self.vocab, dtype=object)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write("\\data\\\n")
            for n, df in enumerate(self.tables, 1):
                fh.write(f"ngram {n}={len(df)}\n")
            for n, df in enumerate(self.tables, 1):
                fh.write(f"\n\\{n}-grams:\n")
                text = words[df["w0"].to_numpy()]
                for k in range(1, n):
                    text = text + " " + words[df[f"w{k}"].to_numpy()]
                lines = np.char.mod("%.7g", df["logp"].to_numpy()).astype(object) + "\t" + text
                if n < self.order:
                    bow = df["bow"].to_numpy()
                    suffix = np.where(bow != 0.0, np.char.mod("\t%.7g", bow), "").astype(object)
                    lines = lines + suffix
                fh.write("\n".join(lines.tolist()))
                fh.write("\n")
            fh.write("\n\\end\\\n")
        return path


def _ngram_frame(flat: np.ndarray, sid: np.ndarray, n: int) -> pd.DataFrame:
    """Raw counts ``c`` of every n-gram window lying inside one sentence (columns w0..)."""
    cols = [f"w{k}" for k in range(n)]
    m = len(flat) - n + 1
    start = np.arange(max(m, 0))
    start = start[sid[start] == sid[start + n - 1]] if m > 0 else start
    df = pd.DataFrame({c: flat[start + k] for k, c in enumerate(cols)})
    return df.groupby(cols, sort=True).size().rename("c").reset_index()


def estimate_kneser_ney(sentences: Iterable[Sequence[str]], *, order: int = 4) -> KneserNeyModel:
    """Estimate an interpolated modified Kneser–Ney model (module docstring; Chen & Goodman 1998).

    ``sentences`` yields token lists, tokenised as the model will be queried
    (e.g. :func:`lm_tokens`). ``<s>``/``</s>`` may not occur inside a sentence;
    a literal ``<unk>`` is counted as the unknown word. Raises ``ValueError`` for
    an empty corpus or an order below 1.
    """
    if order < 1:
        raise ValueError("order must be at least 1")
    ids: dict[str, int] = {BOS: 0, EOS: 1, UNK: 2}
    seq: list[int] = []
    sid_list: list[int] = []
    n_sent = 0
    for sent in sentences:
        row = [0]
        for tok in sent:
            if tok in (BOS, EOS):
                raise ValueError(f"sentence {n_sent + 1} contains the reserved token {tok!r}")
            i = ids.get(tok)
            if i is None:
                i = ids[tok] = len(ids)
            row.append(i)
        row.append(1)
        seq.extend(row)
        sid_list.extend([n_sent] * len(row))
        n_sent += 1
    if n_sent == 0:
        raise ValueError("cannot estimate a language model from an empty corpus")
    vocab = [""] * len(ids)
    for w, i in ids.items():
        vocab[i] = w
    flat = np.asarray(seq, dtype=np.int64)
    sid = np.asarray(sid_list, dtype=np.int64)

    raw = [_ngram_frame(flat, sid, n) for n in range(1, order + 1)]
    # The unigram level lists the whole predictable vocabulary — <unk> too, even
    # unseen — and not <s>, which is never predicted.
    uni = raw[0][raw[0]["w0"] != 0]
    missing = sorted(set(range(1, len(vocab))) - set(uni["w0"].tolist()))
    if missing:
        uni = pd.concat([uni, pd.DataFrame({"w0": np.asarray(missing, np.int64), "c": 0})], ignore_index=True)
    raw[0] = uni.sort_values("w0", ignore_index=True)

    # Adjusted counts a(g): raw at the top order and for n-grams starting with
    # <s>; elsewhere the number of distinct words seen before g.
    adjusted: list[pd.DataFrame] = []
    for n in range(1, order + 1):
        df = raw[n - 1]
        cols = [f"w{k}" for k in range(n)]
        if n == order:
            df = df.assign(a=df["c"])
        else:
            cont = raw[n].groupby([f"w{k}" for k in range(1, n + 1)], sort=False).size().reset_index()
            cont.columns = cols + ["cont"]
            df = df.merge(cont, on=cols, how="left")
            cont_v = df["cont"].fillna(0).to_numpy(dtype=np.int64)
            df = df.drop(columns="cont").assign(a=np.where(df["w0"].to_numpy() == 0, df["c"].to_numpy(), cont_v))
        adjusted.append(df)

    discounts: list[tuple[float, float, float]] = []
    fallback: list[int] = []
    for n, df in enumerate(adjusted, 1):
        a = df["a"].to_numpy()
        d = modified_kn_discounts([int(np.sum(a == k)) for k in (1, 2, 3, 4)])
        if d is None:
            d = FALLBACK_DISCOUNTS
            fallback.append(n)
        discounts.append(d)

    # Interpolated probabilities, lowest order first.
    vsize = len(vocab) - 1  # predictable vocabulary: all but <s>
    probs: list[pd.DataFrame] = []
    gammas: list[pd.DataFrame] = []  # gammas[n-1]: log10 γ of each n-gram as a context
    for n, df in enumerate(adjusted, 1):
        d1, d2, d3 = discounts[n - 1]
        a = df["a"].to_numpy().astype(np.float64)
        num = a - np.select([a == 0, a == 1, a == 2], [0.0, d1, d2], default=d3)
        cols = [f"w{k}" for k in range(n)]
        if n == 1:
            denom = a.sum()
            gamma = (d1 * np.sum(a == 1) + d2 * np.sum(a == 2) + d3 * np.sum(a >= 3)) / denom
            probs.append(df[cols].assign(p=num / denom + gamma / vsize))
            continue
        ctx = cols[:-1]
        agg = (
            df[ctx]
            .assign(a=a, n1=(a == 1) * 1.0, n2=(a == 2) * 1.0, n3=(a >= 3) * 1.0)
            .groupby(ctx, sort=False)
            .sum()
            .reset_index()
        )
        agg["gamma"] = (d1 * agg["n1"] + d2 * agg["n2"] + d3 * agg["n3"]) / agg["a"]
        merged = df[cols].assign(num=num).merge(agg[ctx + ["a", "gamma"]], on=ctx, how="left")
        lower = probs[n - 2].rename(columns={f"w{k}": f"w{k + 1}" for k in range(n - 1)} | {"p": "p_lower"})
        merged = merged.merge(lower, on=cols[1:], how="left")
        if merged["p_lower"].isna().any():
            raise AssertionError("an n-gram's suffix is missing from the order below")
        probs.append(merged[cols].assign(p=merged["num"] / merged["a"] + merged["gamma"] * merged["p_lower"]))
        g = agg[ctx].copy()
        g.columns = [f"w{k}" for k in range(n - 1)]
        gammas.append(g.assign(bow=np.log10(agg["gamma"].to_numpy())))

    # Backoff form: log10 p, and log10 γ of each n-gram as a context one order up.
    tables: list[pd.DataFrame] = []
    for n, df in enumerate(probs, 1):
        cols = [f"w{k}" for k in range(n)]
        if n == 1:
            # <s> is a context only: its unigram row carries the ARPA −99.
            df = pd.concat([pd.DataFrame({"w0": np.asarray([0], np.int64), "p": [0.0]}), df], ignore_index=True)
        p = df["p"].to_numpy()
        with np.errstate(divide="ignore"):
            df = df[cols].assign(logp=np.where(p > 0, np.log10(np.where(p > 0, p, 1.0)), _LOG10_ZERO))
        if n < order:
            df = df.merge(gammas[n - 1], on=cols, how="left")
            df["bow"] = df["bow"].fillna(0.0)
        else:
            df = df.assign(bow=0.0)
        tables.append(df.sort_values(cols, ignore_index=True))
    return KneserNeyModel(order=order, vocab=vocab, tables=tables, discounts=discounts, fallback_orders=fallback)
