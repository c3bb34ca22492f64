"""Bonuses from a rule: Prolific's bulk-bonus list and MTurk's bonus CSV, sums shown first."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest

from annotation.judging.protocols.absolute.hot_path import item_next_for_judge_fast
from annotation.judging.protocols.absolute.services import judgment_submit
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.participation import services as participation
from metrics.dashboard.bonus import BonusRule, bonus_lines, bonus_sums, mturk_bonus_csv, prolific_bulk_bonus
from tests.metrics.reports.conftest import make_study_data, open_judging

PID_A, PID_B = "5f1e2d3c4b5a69788796a5b4", "60aa11bb22cc33dd44ee55ff"


def _row(**kw):
    base = {
        "platform": "prolific",
        "platform_id": PID_A,
        "platform_session_id": "s1",
        "status": "completed",
        "items_done": 10,
        "qc_verdict": "pass",
    }
    return {**base, **kw}


def test_the_rule_pays_per_item_and_per_accepted_completion_only():
    rule = BonusRule(per_item=Decimal("0.05"), per_completion=Decimal("1.00"))
    lines = bonus_lines(
        [
            _row(),
            _row(platform_id=PID_B, status="timed out", items_done=4),
            _row(platform_id="X", qc_verdict="excluded", items_done=0),
            _row(platform="link", platform_id=""),
        ],
        rule,
    )
    assert [(line.participant_id, line.amount) for line in lines] == [
        (PID_A, Decimal("1.50")),
        (PID_B, Decimal("0.20")),
    ]
    assert bonus_sums(lines)["prolific"] == {"people": 2, "total": Decimal("1.70")}


def test_prolific_bulk_bonus_is_id_comma_amount_per_line_without_header():
    lines = bonus_lines([_row(), _row(platform_id=PID_B, items_done=3)], BonusRule(per_item=Decimal("0.1")))
    assert prolific_bulk_bonus(lines) == f"{PID_A},1.00\n{PID_B},0.30\n"


def test_mturk_bonus_csv_has_worker_assignment_amount_and_reason():
    lines = bonus_lines(
        [_row(platform="mturk", platform_id="A1B2C3D4E5F6", platform_session_id="3XYZASSIGN00")],
        BonusRule(per_completion=Decimal("2"), reason="Thanks, careful work"),
    )
    rows = list(csv.reader(io.StringIO(mturk_bonus_csv(lines, reason="Thanks, careful work"))))
    assert rows == [
        ["WorkerId", "AssignmentId", "BonusAmount", "Reason"],
        ["A1B2C3D4E5F6", "3XYZASSIGN00", "2.00", "Thanks, careful work"],
    ]


def test_a_reason_that_a_spreadsheet_would_run_reaches_the_mturk_csv_as_text():
    lines = bonus_lines(
        [_row(platform="mturk", platform_id="A1B2C3D4E5F6", platform_session_id="3XYZASSIGN00")],
        BonusRule(per_completion=Decimal("2")),
    )
    for reason in ("=cmd|' /C calc'!A0", "+1+1", "-2", "@SUM(A1)", "\tx"):
        rows = list(csv.reader(io.StringIO(mturk_bonus_csv(lines, reason=reason))))
        assert rows[1][3] == "'" + reason
        assert rows[1][:3] == ["A1B2C3D4E5F6", "3XYZASSIGN00", "2.00"]


def test_no_one_is_paid_more_than_the_maximum_per_person(settings):
    rows = [_row(items_done=10), _row(platform_id=PID_B, items_done=1)]
    assert bonus_lines(rows, BonusRule(per_item=Decimal("10"))) == bonus_lines(
        rows, BonusRule(per_item=Decimal("10")), max_amount=Decimal("100.00")
    )  # 100.00 exactly is allowed (the default maximum)
    with pytest.raises(ValueError, match=r"1 participant\(s\) more than the maximum of 100.00 per person"):
        bonus_lines(rows, BonusRule(per_item=Decimal("10.01")))
    with pytest.raises(ValueError, match=f"the most: 600000.00 to {PID_A}"):
        bonus_lines(rows, BonusRule(per_completion=Decimal("600000.00")))
    settings.PARAEVAL_BONUS_MAX_PER_PERSON = Decimal("1000")
    assert [line.amount for line in bonus_lines(rows, BonusRule(per_item=Decimal("50")))] == [
        Decimal("500.00"),
        Decimal("50.00"),
    ]


def test_a_bad_rule_is_refused():
    with pytest.raises(ValueError):
        BonusRule(per_item=Decimal("-1"))
    with pytest.raises(ValueError):
        BonusRule(reason="  ")


@pytest.mark.django_db
def test_the_bonus_page_shows_the_sums_before_the_download(researcher, client):
    study = open_judging(make_study_data(researcher, name="Paid study", n_originals=3))
    link = participation.join_link_create(study=study, role="judge", platform="prolific", items_per_participant=4)
    p, _ = participation.participant_join(
        link=link, ids=participation.PlatformIds(platform_id=PID_A, study_id="a" * 24, session_id="b" * 24)
    )
    a = assignment_for_judge(study=study, judge=p.user)
    for _ in range(2):
        item = item_next_for_judge_fast(assignment=a)
        judgment_submit(
            study=study,
            judge=p.user,
            token=item.token,
            key=f"key-{item.token}",
            scores={"adequacy": 3, "fluency": 3, "dissimilarity": 3, "overall": 3},
            serve_stamp=item.serve_stamp,
        )
    client.force_login(researcher)
    assert (
        f"/studies/{study.pk}/participants/bonus/" in client.get(f"/studies/{study.pk}/participants/").content.decode()
    )
    page = client.get(
        f"/studies/{study.pk}/participants/bonus/", {"per_item": "0.25", "per_completion": "1", "reason": "Thanks"}
    ).content.decode()
    assert 'data-platform="prolific"><td>Prolific' in page and ">0.50<" in page  # 2 items, not completed
    r = client.get(
        f"/studies/{study.pk}/participants/bonus/",
        {"per_item": "0.25", "per_completion": "1", "reason": "Thanks", "download": "prolific"},
    )
    assert r.status_code == 200 and r.content.decode() == f"{PID_A},0.50\n"
    assert "attachment" in r["Content-Disposition"]
    bad = client.get(
        f"/studies/{study.pk}/participants/bonus/",
        {"per_item": "-2", "per_completion": "1", "reason": "x", "download": "mturk"},
    )
    assert bad.status_code == 400
    odd = client.get(
        f"/studies/{study.pk}/participants/bonus/",
        {"per_item": "1", "per_completion": "1", "reason": "x", "download": "paypal"},
    )
    assert odd.status_code == 400


@pytest.mark.django_db
def test_a_bonus_above_the_maximum_is_refused_with_a_clear_400(researcher, client):
    study = open_judging(make_study_data(researcher, name="Paid too much", n_originals=3))
    link = participation.join_link_create(study=study, role="judge", platform="prolific", items_per_participant=4)
    p, _ = participation.participant_join(
        link=link, ids=participation.PlatformIds(platform_id=PID_A, study_id="a" * 24, session_id="b" * 24)
    )
    a = assignment_for_judge(study=study, judge=p.user)
    for _ in range(2):
        item = item_next_for_judge_fast(assignment=a)
        judgment_submit(
            study=study,
            judge=p.user,
            token=item.token,
            key=f"key-{item.token}",
            scores={"adequacy": 3, "fluency": 3, "dissimilarity": 3, "overall": 3},
            serve_stamp=item.serve_stamp,
        )
    client.force_login(researcher)
    url = f"/studies/{study.pk}/participants/bonus/"
    slip = {"per_item": "30000", "per_completion": "0", "reason": "Thanks"}  # 30000 typed for 0.30
    page = client.get(url, slip)
    assert page.status_code == 400
    assert "more than the maximum of 100.00 per person (the most: 60000.00" in page.content.decode()
    assert 'id="bonus-sums"' not in page.content.decode()
    for fmt in ("prolific", "mturk"):
        r = client.get(url, {**slip, "download": fmt})
        assert r.status_code == 400 and "attachment" not in r.get("Content-Disposition", "")
        assert r.content.decode().startswith("this rule would pay 1 participant(s) more than the maximum of 100.00")
    ok = client.get(url, {**slip, "per_item": "0.30", "download": "prolific"})
    assert ok.status_code == 200 and ok.content.decode() == f"{PID_A},0.60\n"
