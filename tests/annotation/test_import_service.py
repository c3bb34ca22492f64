"""Imports write everything or nothing, through the one service all doors use."""

import pytest

from annotation.importing.reading import StudyImportError
from annotation.models import Candidate, ImportJob, Original, System
from annotation.services.queueing import study_import_file
from annotation.services.studies import study_create

GOOD = b"original_id,original,system,candidate\n1,The cat sat.,human,A cat was sitting.\n1,The cat sat.,mt,The cat sits.\n2,Go home.,human,Return home.\n"


def counts(study):
    return (
        Original.objects.filter(study=study).count(),
        System.objects.filter(study=study).count(),
        Candidate.objects.filter(original__study=study).count(),
    )


@pytest.fixture
def empty_study(researcher):
    return study_create(name="Empty", owner=researcher)


def test_small_import_writes_originals_systems_candidates(empty_study):
    job = study_import_file(study=empty_study, data=GOOD, filename="d.csv")
    assert job.status == "succeeded"
    assert counts(empty_study) == (2, 2, 3)
    assert job.summary["candidates_added"] == 3


@pytest.mark.parametrize(
    "bad",
    [
        b"original_id,original,system,candidate\n1,a,s,b\n2,c,s,\n",  # empty text late in the file
        b"original_id,original,system,candidate\n1,a,s,b\n1,a,s,c\n",  # duplicate
        b"original_id,original,system,candidate\n1,a,s,b\n1,zz,t,c\n",  # two texts
        b"original_id,original,system\n1,a,s\n",  # missing column
        b"original_id,original,system,candidate\n1,a,s,b\n2,\xff,s,c\n",  # encoding
    ],
)
def test_bad_file_leaves_row_counts_unchanged(empty_study, bad):
    study_import_file(study=empty_study, data=GOOD, filename="d.csv")
    before = counts(empty_study)
    with pytest.raises(StudyImportError):
        study_import_file(study=empty_study, data=bad, filename="d.csv")
    assert counts(empty_study) == before
    assert ImportJob.objects.filter(study=empty_study).count() == 1


def test_study_that_already_holds_the_data_refuses_unless_replace(empty_study):
    study_import_file(study=empty_study, data=GOOD, filename="d.csv")
    with pytest.raises(StudyImportError, match="already holds a candidate for original '1' and system 'human'"):
        study_import_file(study=empty_study, data=GOOD, filename="d.csv")
    changed = GOOD.replace(b"Go home.", b"Go away.")
    with pytest.raises(StudyImportError, match="different text"):
        study_import_file(study=empty_study, data=changed, filename="d.csv")
    assert counts(empty_study) == (2, 2, 3)
    study_import_file(study=empty_study, data=changed, filename="d.csv", replace=True)
    assert counts(empty_study) == (2, 2, 3)
    assert Original.objects.get(study=empty_study, external_id="2").text == "Go away."


def test_a_new_system_can_be_added_to_existing_originals(empty_study):
    study_import_file(study=empty_study, data=GOOD, filename="d.csv")
    more = b"original_id,original,pg1\n1,The cat sat.,The feline sat.\n2,Go home.,Go house.\n"
    study_import_file(study=empty_study, data=more, filename="more.csv")
    assert counts(empty_study) == (2, 3, 5)


def test_size_limit_is_configurable(empty_study, settings):
    settings.PARAEVAL_IMPORT_MAX_BYTES = 20
    with pytest.raises(StudyImportError, match="the limit is 20"):
        study_import_file(study=empty_study, data=GOOD, filename="d.csv")
    assert counts(empty_study) == (0, 0, 0)


@pytest.mark.parametrize("protocol", ["absolute", "ranking"])
def test_replace_is_refused_once_judging_is_open_and_deletes_nothing(empty_study, make_user, protocol):
    """The judging items hold their candidates and originals with RESTRICT (issue 38: PROTECT
    also blocked deleting the study itself): a replace still meets them and is refused whole."""
    from annotation.enums import Role
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from annotation.services.membership import study_member_add

    study_import_file(study=empty_study, data=GOOD, filename="d.csv")
    study_member_add(study=empty_study, user=make_user("ann"), role=Role.JUDGE)
    changes = {"protocol": protocol} | ({"ranking_k": 2} if protocol == "ranking" else {})
    design_update(study=empty_study, changes=changes)
    study_judging_open(study=empty_study)
    with pytest.raises(StudyImportError, match="cannot be replaced"):
        study_import_file(study=empty_study, data=GOOD, filename="d.csv", replace=True)
    assert counts(empty_study)[0] == 2
