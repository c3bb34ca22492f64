"""Hostile query strings and oversized drafts on the alignment pages: a clear 4xx, never a 500."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

#: Ids that ``str.isdigit`` accepts but ``int`` refuses ("²") or reads as another number
#: ("١" is Arabic-Indic one), and ids too long for a 64-bit column.
HOSTILE_SOURCES = ["system:²", "annotator:²", "system:١", "annotator:٣", "system:" + "9" * 30, "system:-1", "system: 1"]


@pytest.mark.parametrize("source", HOSTILE_SOURCES)
def test_non_ascii_or_overlong_source_ids_are_refused_with_400_on_exports(client, api_client, researcher, study,
                                                                        pairs, system, source):
    client.force_login(researcher)
    r = client.get(reverse("alignment:export", kwargs={"study_id": study.pk}), {"source": source})
    assert r.status_code == 400 and "unknown source" in r.content.decode()
    api_client.force_authenticate(researcher)
    r = api_client.get(f"/api/alignment/studies/{study.pk}/export/", {"source": source})
    assert r.status_code == 400 and "unknown source" in r.json()["detail"]


@pytest.mark.parametrize("source", HOSTILE_SOURCES)
def test_non_ascii_or_overlong_source_ids_fall_back_to_gold_on_the_pair_page(client, researcher, study, pairs,
                                                                           system, source):
    client.force_login(researcher)
    r = client.get(reverse("alignment:pair", kwargs={"study_id": study.pk, "pair_id": pairs[0].pk}), {"source": source})
    assert r.status_code == 200
    assert r.context["source"] == "gold"


@pytest.mark.parametrize("reader, text", [
    ("read_naacl", "1 ² 1 S\n"), ("read_naacl", "١ 1 1 S\n"),
    ("read_csv", "pair,i,j,kind\n²,0,0,sure\n"), ("read_csv", "pair,i,j,kind\n0,٣,0,sure\n"),
    ("read_pharaoh", "0-0 ١-1\n"),
])
def test_alignment_files_with_non_ascii_digits_name_the_bad_cell(reader, text):
    from metrics.core import alignment

    with pytest.raises(alignment.FormatError, match="line 1|line 2|not a"):
        getattr(alignment, reader)(text)
