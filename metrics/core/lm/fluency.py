"""KenLM models: the ARPA cache, loading, normalised log-probabilities and the ``lm-fluency`` metric."""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from metrics.core.base.metric import Metric
from metrics.core.base.params import REPO_ROOT, MetricError, Param, ResourceUnavailable
from metrics.core.base.resources import ResourceSpec, file_fingerprint
from metrics.core.cards import MetricCard
from metrics.core.compressed import copy_decompressed
from metrics.core.registry import register

from .estimate import LM_VERSION, estimate_kneser_ney, lm_tokens, read_sentences

# --------------------------------------------------------------------------- KenLM and the model cache


def cache_dir() -> Path:
    """Where built models are cached: ``$PARAEVAL_CACHE_DIR``, else ``<repo>/var/cache``."""
    return Path(os.environ.get("PARAEVAL_CACHE_DIR") or REPO_ROOT / "var" / "cache")


_build_lock = threading.Lock()


def cached_arpa(text_path: str | Path, *, order: int = 4) -> Path:
    """The ARPA model of a training text, estimated on first use and cached.

    The file is ``lm_<sha256 prefix of the text>_o<order>_<LM_VERSION>.arpa`` in
    :func:`cache_dir`. Side effects: creates the directory and the file, written
    under a temporary name and renamed so that concurrent workers never read a
    half-written model.
    """
    text_path = Path(text_path)
    target = cache_dir() / f"lm_{file_fingerprint(text_path)}_o{order}_{LM_VERSION}.arpa"
    if target.exists():
        return target
    with _build_lock:
        if target.exists():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        model = estimate_kneser_ney(read_sentences(text_path), order=order)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
        os.close(fd)
        try:
            model.write_arpa(tmp)
            os.chmod(tmp, 0o644)  # mkstemp makes it private; web and worker may run as other users
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return target


_MODEL_SUFFIXES = (".arpa", ".bin", ".binary", ".klm")


_COMPRESSED_ARPA = (".arpa.gz", ".arpa.xz")


def _decompressed_arpa(path: Path) -> Path:
    """A plain copy of a compressed ARPA file in the cache (this KenLM build reads no gzip/xz).

    Streamed through the decompression cap (:mod:`metrics.core.compressed`): a
    file that expands past it raises :class:`DecompressedTooLarge` and the
    partial copy is deleted, so nothing is left in the cache.
    """
    target = cache_dir() / f"lm_{file_fingerprint(path)}_{path.name.rsplit('.', 1)[0]}"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            copy_decompressed(path, out)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


_kenlm_cache: dict[tuple[str, int], object] = {}


def load_kenlm(path: str | Path, *, order: int = 4):
    """A ``kenlm.Model`` for an ARPA/KenLM-binary file, or for a training text.

    A path ending in ``.arpa``, ``.bin``, ``.binary`` or ``.klm`` is loaded as
    it is; ``.arpa.gz``/``.arpa.xz`` are first decompressed into the cache (the
    KenLM wheel reads no compressed files); anything else is read as training
    text (one tokenised sentence a line, plain/.gz/.xz) and estimated through
    :func:`cached_arpa`.
    Models stay loaded per (path, order) for the life of the process. Raises
    :class:`~metrics.core.base.ResourceUnavailable` when KenLM cannot read it.
    """
    import kenlm

    path = Path(path)
    key = (str(path.resolve()), order)
    if key not in _kenlm_cache:
        name = path.name.lower()
        if name.endswith(_MODEL_SUFFIXES):
            model_path = path
        elif name.endswith(_COMPRESSED_ARPA):
            model_path = _decompressed_arpa(path)
        else:
            model_path = cached_arpa(path, order=order)
        config = kenlm.Config()
        config.show_progress = False  # KenLM would draw a progress bar on stderr in every worker
        try:
            _kenlm_cache[key] = kenlm.Model(str(model_path), config)
        except (OSError, RuntimeError) as exc:
            if model_path != path:  # our decompressed copy of a bad file: do not keep it in the cache
                Path(model_path).unlink(missing_ok=True)
            raise ResourceUnavailable(f"KenLM cannot load {str(model_path)!r}: {exc}") from None
    return _kenlm_cache[key]


def normalized_logprob(model, tokens: Sequence[str]) -> tuple[float, int]:
    """(log10 Pr(S), length(S)) of PEM's fluency Pn = log Pr(S) / length(S) (§4.4).

    Pr(S) is the probability of ``<s> S </s>`` under ``model`` (anything with
    KenLM's ``score(sentence, bos=True, eos=True)``), end of sentence included, as
    a standard n-gram LM's sentence probability is. length(S) counts the tokens
    of S plus ``</s>`` — every predicted event — so Pn is the mean log10
    probability per prediction (−log10 of SRILM's ``ppl``) and is defined for an
    empty sentence. Log base 10 as ARPA/KenLM/SRILM report it; the paper names
    no base, and a base is only a scale factor that PEM's feature scaling removes.
    """
    return float(model.score(" ".join(tokens), bos=True, eos=True)), len(tokens) + 1


@register
class LmFluency(Metric):
    """Registered ``lm-fluency``: PEM's fluency feature Pn of the candidate (§4.4).

    Statistics per segment ``[log10 Pr(P), length(P)]``; the sentence score is
    their ratio and the corpus score Σ log10 Pr / Σ length (a length-weighted
    mean). Higher (closer to 0) is more fluent.
    """

    slug = "lm-fluency"
    description = "PEM fluency: log10 Pr(P) / length(P) under a 4-gram modified Kneser-Ney LM (KenLM)."
    version = "1"
    params = {
        "order": Param(
            "order", int, 4, "n-gram order when the model is built from training text", minimum=1, maximum=8
        ),
        "lowercase": Param("lowercase", bool, True, "lower-case tokens (must match the model's training text)"),
    }
    resources = {
        "model": ResourceSpec(
            "model",
            "an ARPA/KenLM model, or tokenised training text (one sentence a line) that is built once into "
            "the cache ($PARAEVAL_CACHE_DIR, default var/cache)",
            default="fixtures/resources/lm_bible_en_train.txt.xz",
        ),
    }
    stat_names = ("log10_prob", "length")
    card = MetricCard(
        measures="How fluent the candidate is: its average log10 probability per word under a 4-gram language model.",
        direction="higher",
        range="−∞ to 0 (log10 probability per word; typical sentences −2 to −5)",
        needs="candidate (P) and a language model (built in: a KenLM model of the Bible's English text)",
        reference="Liu, Dahlmeier & Ng 2010, PEM: A Paraphrase Evaluation Metric Exploiting Parallel Texts (EMNLP), §4.4",
        caveats="Rewards common wording in the model's domain: a fluent sentence about an unusual topic scores low. "
        "Random text drawn from a unigram model scores lowest, as it should.",
    )

    def _segment_stats(self, originals, candidates, references):
        path = self.resource_path("model")
        try:
            model = load_kenlm(path, order=self.param_values["order"])
        except MetricError:
            raise
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise ResourceUnavailable(f"resource 'model': cannot use {str(path)!r}: {exc}") from None
        low = self.param_values["lowercase"]
        return np.array([normalized_logprob(model, lm_tokens(c, lowercase=low)) for c in candidates])

    def scores_from_sums(self, sums: np.ndarray) -> np.ndarray:
        """Pn = Σ log10 Pr / Σ length."""
        sums = np.asarray(sums, dtype=np.float64)
        return sums[:, 0] / sums[:, 1]
