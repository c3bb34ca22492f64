"""A judgments file with wrong values AND unknown originals/systems lists every problem in one round
(issue 28, item 2: the unknown originals and systems used to come only after the values were fixed)."""

import pytest
from django.core.management import CommandError, call_command

from annotation.judging.protocols.absolute.models import Judgment


@pytest.mark.django_db
def test_value_errors_and_unknown_originals_and_systems_are_listed_together(study, tmp_path):
    f = tmp_path / "j.tsv"
    f.write_text(
        "judge\toriginal_id\tsystem\tcriterion\tvalue\n"
        "w1\ts0\thuman\toverall\t9\n"  # line 2: off the 1-5 scale
        "w1\tnope\thuman\toverall\t3\n"  # line 3: no such original
        "w1\ts1\tnobody\toverall\t3\n"  # line 4: no such system
        "w1\tghost\thuman\tbeauty\t3\n"  # line 5: unknown criterion and unknown original
        "w1\ts2\thuman\toverall\t4\n",
        encoding="utf-8",
    )
    with pytest.raises(CommandError) as info:
        call_command("import_judgments", "--study", study.name, str(f))
    text = str(info.value)
    assert "j.tsv, line 2, column 'value'" in text
    assert "j.tsv, line 3, column 'original_id'" in text and "no original 'nope'" in text
    assert "j.tsv, line 4, column 'system'" in text and "system 'nobody'" in text
    assert "j.tsv, line 5, column 'criterion'" in text and "no original 'ghost'" in text
    lines = [int(part.split("line ")[1].split(",")[0]) for part in text.splitlines() if ", line " in part]
    assert lines == sorted(lines)
    assert Judgment.objects.filter(study=study).count() == 0


@pytest.mark.django_db
def test_a_file_with_only_value_errors_still_reports_them(study, tmp_path):
    f = tmp_path / "j.csv"
    f.write_text("judge,original_id,system,criterion,value\nw1,s0,human,overall,0\n", encoding="utf-8")
    with pytest.raises(CommandError, match="line 2, column 'value'"):
        call_command("import_judgments", "--study", study.name, str(f))
    assert Judgment.objects.filter(study=study).count() == 0
