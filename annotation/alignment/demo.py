"""The demo's alignment part: 50 groups from the Gospel of John (KJV key verse
against WEB and two machine systems' outputs).

Loads ``fixtures/alignment/demo_groups.jsonl.gz`` (built by
``fixtures/build_alignment_demo.py``; schema there) into the demo study: each
group's key (KJV) against its members (WEB, ``synonyms``, ``pivot-mt``), the two automatic alignments as
systems — ``pivot`` (shared Strong's numbers: ParaMetric's parallel-corpus
method) and ``paraeval-aligner`` (``metrics.core.aligner``) — with the aligner
pre-filling the grid, and every pair assigned to the ``annotator`` account.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotation.alignment.services.assignments import alignment_config_update, assignments_create
from annotation.alignment.services.pairs import pairs_import_parsed
from annotation.alignment.services.systems import system_alignments_store
from metrics.core.alignment.io import load_groups
from metrics.core.alignment.model import Alignment

from .enums import AlignmentSystemKind
from .importing import PairData, ParsedPairs
from .models import AlignmentPair

DEMO_GROUPS = Path(settings.BASE_DIR) / "fixtures" / "alignment" / "demo_groups.jsonl.gz"
SYSTEMS = {
    "paraeval-aligner": (
        AlignmentSystemKind.ALIGNER,
        "paraeval's monolingual aligner (metrics.core.aligner), default parameters",
    ),
    "pivot": (AlignmentSystemKind.PIVOT, "words of the two translations that carry the same Strong's number"),
}
PREFILL = "paraeval-aligner"


def setup(*, study, accounts, stdout=None) -> None:
    """Load the demo groups into ``study`` once (does nothing if it already has pairs)."""
    if AlignmentPair.objects.filter(study=study).exists():
        return
    groups = load_groups(DEMO_GROUPS)
    parsed = ParsedPairs(filename=DEMO_GROUPS.name, format="jsonl")
    automatic: dict[str, dict[str, Alignment]] = {name: {} for name in SYSTEMS}
    for n, g in enumerate(groups, 1):
        key = g["key"]
        for m in g["members"]:
            pid = f"{g['group']} {m['system']}"
            parsed.pairs.append(
                PairData(pid, g["group"], key["text"], m["text"], list(key["tokens"]), list(m["tokens"]), n)
            )
            for name in SYSTEMS:
                if name in m["alignments"]:  # machine members have no Strong's (pivot) alignment
                    automatic[name][pid] = m["alignments"][name]
    with transaction.atomic():
        pairs_import_parsed(study=study, parsed=parsed)
        ids = dict(AlignmentPair.objects.filter(study=study).values_list("external_id", "pk"))
        systems = {}
        for name, (kind, description) in SYSTEMS.items():
            systems[name] = system_alignments_store(
                study=study,
                name=name,
                kind=kind,
                description=description,
                alignments={ids[pid]: a for pid, a in automatic[name].items()},
            )
        alignment_config_update(study=study, annotators_per_pair=1, prefill_system=systems[PREFILL])
        result = assignments_create(study=study, annotators=[accounts["annotator"]])
    if stdout is not None:
        stdout.write(
            f"alignment: {len(parsed.pairs)} pairs in {len(groups)} groups, systems "
            f"{', '.join(SYSTEMS)}; {result['created']} pairs assigned to 'annotator'\n"
        )
