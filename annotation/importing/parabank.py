"""ParaBank's crowd evaluation (Hu et al., AAAI 2019) as a paraeval design and two paraeval files."""

from __future__ import annotations

import csv
import io

#: ParaBank's two judgments (Hu et al., AAAI 2019) as a paraeval design: semantic
#: similarity to the original on a 0–100 slider, and a 3-way grammaticality choice
#: (0 nonsensical, 1 meaningful but ungrammatical, 2 meaningful and grammatical).
PARABANK_CRITERIA = [
    {
        "slug": "similarity",
        "name": "Similarity",
        "help": "How close is the meaning of the paraphrase to the original's?",
        "scale": {
            "type": "slider",
            "min": 0,
            "max": 100,
            "anchors": {"low": "Completely different meaning", "mid": "Half the meaning", "high": "Identical meaning"},
        },
    },
    {
        "slug": "grammaticality",
        "name": "Grammaticality",
        "help": "Is the paraphrase meaningful and grammatical?",
        "scale": {
            "type": "points",
            "min": 0,
            "max": 2,
            "labels": ["Nonsensical", "Meaningful but ungrammatical", "Meaningful and grammatical"],
        },
    },
]


def _tsv(rows) -> bytes:
    """Rows as TSV (no quoting; ParaBank's texts hold no tabs or newlines — checked)."""
    out = []
    for row in rows:
        for cell in row:
            if "\t" in cell or "\n" in cell or "\r" in cell:
                raise ValueError(f"a ParaBank cell holds a tab or a newline: {cell[:60]!r}")
        out.append("\t".join(row))
    return ("\n".join(out) + "\n").encode()


def parabank_files(directory) -> tuple[bytes, bytes]:
    """ParaBank's published evaluation (``ref.tsv``, ``candidates.tsv.xz``) as two paraeval
    files: a long study file (original_id, original, group, system, candidate: one
    candidate per original × system of ``sys_id``) and a long judgments file (judge,
    original_id, systems, criterion, value), in the file's order so that a worker's
    repeated judgment of a candidate becomes a later revision; the ``judgment`` column
    (the source line) keeps each source row's two values together. Empty
    ``human_score`` cells (403, all with grammaticality 0) give only the grammaticality row.
    """
    import lzma
    from pathlib import Path

    directory = Path(directory)
    ref_text = (directory / "ref.tsv").read_text(encoding="utf-8")
    with lzma.open(directory / "candidates.tsv.xz", "rt", encoding="utf-8", newline="") as fh:
        cand_text = fh.read()
    refs = list(csv.DictReader(io.StringIO(ref_text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE))
    cands = list(csv.DictReader(io.StringIO(cand_text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE))
    ref_sent = {r["ref_id"]: r["ref_sent"] for r in refs}
    ref_len = {r["ref_id"]: r["ref_len"] for r in refs}
    study_rows = [("original_id", "original", "group", "system", "candidate")]
    seen: set[tuple[str, str]] = set()
    judgment_rows = [("judge", "original_id", "systems", "criterion", "value", "judgment")]
    for line, c in enumerate(cands, start=2):
        rid = c["ref_id"]
        for system in c["sys_id"].split():
            if (rid, system) not in seen:
                seen.add((rid, system))
                study_rows.append((rid, ref_sent[rid], f"len{ref_len[rid]}", system, c["candidate"]))
        if c["human_score"].strip():
            judgment_rows.append(
                (c["worker_id_anon"], rid, c["sys_id"], "similarity", c["human_score"].strip(), str(line))
            )
        judgment_rows.append((c["worker_id_anon"], rid, c["sys_id"], "grammaticality", c["gm"].strip(), str(line)))
    return _tsv(study_rows), _tsv(judgment_rows)
