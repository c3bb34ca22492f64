"""Fixtures of the alignment tests: a study with a few pairs, systems and people."""

from __future__ import annotations

import pytest

from annotation.alignment.models import AlignmentPair
from annotation.alignment.services.pairs import pairs_import_file
from annotation.alignment.services.systems import system_alignments_store
from metrics.core.alignment.model import Alignment

#: Three pairs in two groups: g1 is a key sentence against two others.
PAIRS_JSONL = (
    '{"group_id": "g1", "key": "In the beginning was the Word.", '
    '"others": ["At the beginning the Word existed.", "In the start was the Word."]}\n'
    '{"pair_id": "p3", "sentence1": "He gave up the ghost.", "sentence2": "He died."}\n'
)


def upload(name: str, text: str | bytes, content_type: str = "text/plain"):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, text.encode() if isinstance(text, str) else text, content_type=content_type)


@pytest.fixture
def pairs(study):
    """The study's three pairs, in task order."""
    pairs_import_file(study=study, data=PAIRS_JSONL.encode(), filename="pairs.jsonl")
    return list(AlignmentPair.objects.filter(study=study).order_by("position"))


def links(pair, sure=(), possible=()) -> Alignment:
    return Alignment(tuple(pair.tokens1), tuple(pair.tokens2), frozenset(sure), frozenset(possible))


@pytest.fixture
def system(study, pairs):
    """An imported system with sure and possible links on every pair."""
    p1, p2, p3 = pairs
    return system_alignments_store(
        study=study,
        name="fast_align",
        alignments={
            p1.pk: links(p1, sure={(0, 0), (2, 2), (5, 4)}, possible={(1, 1)}),
            p2.pk: links(p2, sure={(0, 0), (1, 1), (4, 4), (5, 5)}, possible={(2, 2)}),
            p3.pk: links(p3, sure={(0, 0), (1, 1)}, possible={(5, 2)}),
        },
    )


@pytest.fixture
def second_annotator(make_user, study):
    from annotation.enums import Role
    from annotation.services.membership import study_member_add

    user = make_user("bert")
    study_member_add(study=study, user=user, role=Role.ANNOTATOR)
    return user
