"""The one rule of every CSV export: text that a spreadsheet would run as a formula gets a leading '."""

import pytest

from metrics.core.spreadsheet import formula_safe


@pytest.mark.parametrize(
    "value", ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "=cmd|' /C calc'!A0"]
)
def test_csv_cells_that_spreadsheets_would_run_are_neutralised(value):
    assert formula_safe(value) == "'" + value


def test_plain_text_and_numbers_are_left_alone():
    assert formula_safe("plain") == "plain" and formula_safe(3) == 3 and formula_safe(-0.5) == -0.5
