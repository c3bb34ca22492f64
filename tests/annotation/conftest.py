"""Fixtures of tests/annotation: a study in each shipped language (the test_i18n*.py files)."""

import pytest

from annotation import services as study_services
from annotation.judging import services as judging_services
from tests.annotation.i18n_helpers import SHIPPED


@pytest.fixture(params=sorted(SHIPPED))
def lang(request):
    return request.param


@pytest.fixture
def translated_study(study, judge, researcher, lang):
    study_services.study_update(study=study, changes={"language": lang})
    judging_services.design_update(study=study, changes={"seed": 3})
    judging_services.study_judging_open(study=study)
    study.refresh_from_db()
    return study
