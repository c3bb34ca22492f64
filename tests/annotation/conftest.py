"""Fixtures of tests/annotation: a study in each shipped language (the test_i18n*.py files)."""

import pytest

from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from annotation.services.studies import study_update
from tests.annotation.i18n_helpers import SHIPPED


@pytest.fixture(params=sorted(SHIPPED))
def lang(request):
    return request.param


@pytest.fixture
def translated_study(study, judge, researcher, lang):
    study_update(study=study, changes={"language": lang})
    design_update(study=study, changes={"seed": 3})
    study_judging_open(study=study)
    study.refresh_from_db()
    return study
