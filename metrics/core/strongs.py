"""Word links between Bible translations through Strong's numbers.

The bible corpus (``verses.jsonl.xz``; fields ``kjv``, ``web``, ``rv1909`` and
their ``*_tagged`` lists) tags each span of a verse with the Strong's ids of the
Hebrew/Greek source words it translates. Two tokens in two translations that
carry the same id translate the same source word, which gives a word alignment
for free: PEM's pivot phrase table (Liu et al. 2010, §4.1, English ↔ Spanish)
and the alignment grid's pre-fill (English ↔ English) are both built from it.

Two problems of the real data are handled here, and both are documented where
they are handled:

* **Token boundaries.** Tagged spans carry no spaces between adjacent tagged
  words (``"beginning"``, ``"God"``), so the spans must be tokenised one by one.
  On the whole corpus the non-space characters of the spans always equal those
  of the plain text, but the token sequences differ in 376 RV1909 verses (the
  plain text lost spaces: ``"allítambiénbdelio"``), 10 KJV verses (a tag splits a
  word: ``"give" + "n"``) and 7 WEB verses. :func:`tag_tokens` therefore takes
  the plain ``text`` optionally: given it, the tokens are exactly
  ``tokenize(text)`` and the ids are projected onto them character by character.
* **Noisy tags.** WEB's tagging is automatic: in Genesis 1:1 "In" and "and" carry
  H0430 (God) and every "the" carries H0853 (the untranslatable Hebrew object
  marker). Linking every pair of tokens that share an id would tie function words
  across the verse and destroy phrase consistency. :func:`strongs_links` therefore
  ignores a small stop list of ids and, when an id occurs in several separate
  places, pairs its occurrences one to one by relative position (see there).
"""

from __future__ import annotations

import json
import lzma
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from metrics.core.text import normalize, tokenize

__all__ = ["DEFAULT_IGNORED_IDS", "tag_tokens", "strongs_links", "load_verses"]

#: H0853 (אֵת) marks a definite direct object and has no English or Spanish word;
#: WEB tags "the"/"them"/"its" with it 4,871 times in the first 5,000 verses.
DEFAULT_IGNORED_IDS: frozenset[str] = frozenset({"H0853"})


def tag_tokens(
    tagged: Sequence[Sequence],
    *,
    text: str | None = None,
) -> tuple[list[str], list[frozenset[str]]]:
    """Tokens of a tagged verse and, for each token, the Strong's ids it carries.

    ``tagged`` is a list of ``[text_span, [strong_ids...]]`` in reading order.
    Without ``text``, each span is tokenised on its own with
    :func:`metrics.core.text.tokenize` and every token gets its span's ids.
    With ``text`` (the verse's plain text) the tokens are exactly
    ``tokenize(text)`` and a token gets the union of the ids of every span that
    one of its characters came from. This needs the non-space characters of the
    spans and of ``text`` to agree (true for the whole bible corpus) and raises
    ``ValueError`` otherwise.
    """
    if text is None:
        tokens: list[str] = []
        ids: list[frozenset[str]] = []
        for span, span_ids in tagged:
            fs = frozenset(span_ids)
            for tok in tokenize(span):
                tokens.append(tok)
                ids.append(fs)
        return tokens, ids

    # Label every non-space character of the spans with its span's ids, then walk
    # the plain text's tokens over the same character stream.
    char_ids: list[frozenset[str]] = []
    chars: list[str] = []
    for span, span_ids in tagged:
        fs = frozenset(span_ids)
        for ch in normalize(span):
            if not ch.isspace():
                chars.append(ch)
                char_ids.append(fs)
    tokens = tokenize(text)
    ids = []
    pos = 0
    for tok in tokens:
        n = len(tok)
        if "".join(chars[pos : pos + n]) != tok:
            raise ValueError(
                f"tagged spans and text disagree at token {tok!r} (character {pos}); "
                "they must have the same non-space characters"
            )
        ids.append(frozenset().union(*char_ids[pos : pos + n]))
        pos += n
    if pos != len(chars):
        raise ValueError("tagged spans have characters that the text lacks")
    return tokens, ids


def _runs(tags: Sequence[frozenset[str]], ignored: frozenset[str]) -> dict[str, list[tuple[int, int]]]:
    """For each id, the maximal runs [start, end) of consecutive tokens carrying it."""
    runs: dict[str, list[tuple[int, int]]] = {}
    for i, fs in enumerate(tags):
        for sid in fs:
            if sid in ignored:
                continue
            lst = runs.setdefault(sid, [])
            if lst and lst[-1][1] == i:
                lst[-1] = (lst[-1][0], i + 1)
            else:
                lst.append((i, i + 1))
    return runs


def _centre(run: tuple[int, int], length: int) -> float:
    return (run[0] + run[1]) / 2 / max(length, 1)


def strongs_links(
    tags1: Sequence[frozenset[str]],
    tags2: Sequence[frozenset[str]],
    *,
    ignored_ids: Iterable[str] = DEFAULT_IGNORED_IDS,
) -> set[tuple[int, int]]:
    """Links (i, j) between tokens of two translations that share a Strong's id.

    For each id, its *occurrences* on a side are the maximal runs of consecutive
    tokens carrying it (a multi-word span such as "los cielos" is one run).

    * one run on each side: every token of the one is linked to every token of
      the other;
    * k runs on each side: the r-th run is paired with the r-th (the source word
      occurs k times and both translations keep their order);
    * k1 ≠ k2 runs: each run of the side with fewer runs is paired with a distinct
      run of the other side, greedily by the smallest distance between the runs'
      relative positions (centre / sentence length); the other side's leftover
      runs get no link. This is what drops WEB's stray tags: in Genesis 1:1 the
      KJV "God" (H0430) is paired with WEB's "God", not with "In" or "and".

    Ids in ``ignored_ids`` (default: :data:`DEFAULT_IGNORED_IDS`) are skipped.
    """
    ignored = frozenset(ignored_ids)
    runs1 = _runs(tags1, ignored)
    runs2 = _runs(tags2, ignored)
    n1, n2 = len(tags1), len(tags2)
    links: set[tuple[int, int]] = set()
    for sid, r1 in runs1.items():
        r2 = runs2.get(sid)
        if not r2:
            continue
        if len(r1) == len(r2):
            pairs = list(zip(r1, r2))
        else:
            cand = sorted(
                (abs(_centre(a, n1) - _centre(b, n2)), ia, ib) for ia, a in enumerate(r1) for ib, b in enumerate(r2)
            )
            used1: set[int] = set()
            used2: set[int] = set()
            pairs = []
            for _, ia, ib in cand:
                if ia in used1 or ib in used2:
                    continue
                used1.add(ia)
                used2.add(ib)
                pairs.append((r1[ia], r2[ib]))
        for a, b in pairs:
            for i in range(*a):
                for j in range(*b):
                    links.add((i, j))
    return links


def load_verses(path: str | Path) -> Iterator[dict]:
    """Yield the verse objects of a JSON-lines file, xz-compressed or plain.

    Each object has ``ref`` ("Genesis 1:1"), the plain texts and the ``*_tagged``
    lists described in the data's README. The file is streamed, not loaded whole.
    """
    path = Path(path)
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not a JSON object ({exc.msg})") from None
