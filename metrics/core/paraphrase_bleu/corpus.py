"""The English training text of paraphrase-bleu's context classifiers: sentences and a word index."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from metrics.core.base.params import REPO_ROOT
from metrics.core.base.resources import file_fingerprint
from metrics.core.text import tokenize

__all__ = ["DEFAULT_CORPUS", "TrainingCorpus", "load_training_corpus"]


DEFAULT_CORPUS = REPO_ROOT / "fixtures" / "resources" / "bible_en.tsv.xz"


class TrainingCorpus:
    """Lower-cased tokenized sentences and an index word → sentences containing it."""

    def __init__(self, sentences: list[list[str]], *, fingerprint: str) -> None:
        self.sentences = sentences
        self.fingerprint = fingerprint
        index: dict[str, list[int]] = {}
        for sid, toks in enumerate(sentences):
            for t in set(toks):
                index.setdefault(t, []).append(sid)
        self._index = index

    def __len__(self) -> int:
        return len(self.sentences)

    def sentences_with(self, word: str) -> list[int]:
        """Ids of the sentences that contain ``word`` (lower-case), ascending."""
        return self._index.get(word.lower(), [])

    def count(self, word: str) -> int:
        """Number of sentences containing ``word``."""
        return len(self._index.get(word.lower(), ()))


def _open_text(path: Path):
    from metrics.core.compressed import open_resource  # decompresses through the size cap

    return open_resource(path, "rt")


def load_training_corpus(path: str | os.PathLike = DEFAULT_CORPUS) -> TrainingCorpus:
    """Read a training corpus (cached per path and file state).

    A file whose first line is ``ref<TAB>...`` is the TSV of
    ``fixtures/build_bible_english.py``: every column but ``ref`` is a sentence.
    Anything else is plain text, one sentence a line. ``.xz``/``.gz`` are
    decompressed.
    """
    p = Path(path).resolve()
    return _load_corpus(str(p), file_fingerprint(p))


@lru_cache(maxsize=2)
def _load_corpus(path: str, fingerprint: str) -> TrainingCorpus:
    sentences: list[list[str]] = []
    with _open_text(Path(path)) as fh:
        first = fh.readline()
        tsv = first.startswith("ref\t")
        lines = fh if tsv else [first, *fh]
        for line in lines:
            fields = line.rstrip("\n").split("\t")[1:] if tsv else [line.rstrip("\n")]
            for text in fields:
                toks = tokenize(text, lowercase=True)
                if toks:
                    sentences.append(toks)
    if not sentences:
        raise ValueError(f"{path}: no sentences")
    return TrainingCorpus(sentences, fingerprint=fingerprint)
