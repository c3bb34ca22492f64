"""The demo study gets 50 groups (KJV vs WEB and two machine systems), two automatic systems and the annotator's tasks."""

import io

import pytest

from annotation.alignment import demo, selectors
from annotation.alignment.models import AlignmentAssignment, AlignmentPair, AlignmentSystem
from metrics.core.alignment.io import load_groups

pytestmark = pytest.mark.django_db


def test_the_demo_loads_fifty_groups_with_the_aligner_prefilling_the_annotators_grid(study, annotator):
    out = io.StringIO()
    demo.setup(study=study, accounts={"annotator": annotator}, stdout=out)
    groups = load_groups(demo.DEMO_GROUPS)
    pairs = list(AlignmentPair.objects.filter(study=study).order_by("position"))
    assert len(pairs) == sum(len(g["members"]) for g in groups) == 150
    assert pairs[0].external_id == "John 1:1 web" and pairs[0].tokens1 == groups[0]["key"]["tokens"]
    kinds = dict(AlignmentSystem.objects.filter(study=study).values_list("name", "kind"))
    assert kinds == {"pivot": "pivot", "paraeval-aligner": "aligner"}
    pivot = selectors.system_alignments(system=AlignmentSystem.objects.get(study=study, name="pivot"))
    assert pivot[pairs[0].pk] == groups[0]["members"][0]["alignments"]["pivot"]
    config = selectors.alignment_config_get(study=study)
    assert config.prefill_system.name == "paraeval-aligner" and config.annotators_per_pair == 1
    first = AlignmentAssignment.objects.get(annotator=annotator, pair=pairs[0])
    aligner = groups[0]["members"][0]["alignments"]["paraeval-aligner"]
    assert {tuple(x) for x in first.sure} == aligner.sure
    assert AlignmentAssignment.objects.filter(annotator=annotator).count() == len(pairs)
    assert "150 pairs assigned to 'annotator'" in out.getvalue()
    assert pairs[1].external_id == "John 1:1 synonyms" and pairs[2].external_id == "John 1:1 pivot-mt"
    assert pairs[1].pk not in pivot  # no Strong's alignment for machine output
    demo.setup(study=study, accounts={"annotator": annotator}, stdout=None)  # a second call adds nothing
    assert AlignmentPair.objects.filter(study=study).count() == len(pairs)
