"""docs/cli.md names every manage.py command paraeval ships (issue 28, item 3)."""

from pathlib import Path

from django.core.management import get_commands

ROOT = Path(__file__).resolve().parent.parent.parent


def paraeval_commands() -> set[str]:
    return {name for name, app in get_commands().items() if app.split(".")[0] in {"annotation", "metrics"}}


def test_the_command_line_page_lists_every_paraeval_command():
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    commands = paraeval_commands()
    assert {"create_researcher", "add_participants", "import_judgments", "signin_link", "design",
            "metric_run"} <= commands
    missing = sorted(c for c in commands if f"| `{c}`" not in page and f", `{c}`" not in page)
    assert missing == [], "add these commands to a table of docs/cli.md"


def test_the_command_line_page_says_how_to_call_manage_py():
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "## Calling manage.py" in page
    assert "make manage ARGS=" in page and ".venv/bin/python manage.py" in page


def test_no_page_sends_researchers_to_the_django_admin_to_make_judges():
    """docs/researchers.md said to create judges in /admin/, docs/people.md that nobody needs it."""
    import re

    for page in sorted((ROOT / "docs").glob("*.md")):
        text = " ".join(page.read_text(encoding="utf-8").split())
        assert not re.search(r"(create|make|add)\s+(them|judges|annotators|accounts)[^.]{0,40}/admin/", text), page.name
    assert "no Django admin needed" in " ".join((ROOT / "docs" / "researchers.md").read_text(encoding="utf-8").split())


def test_the_import_forms_point_to_the_guide_that_has_the_format():
    from annotation.alignment.forms import PairsImportForm
    from annotation.forms import StudyImportForm

    study_help = str(StudyImportForm.base_fields["file"].help_text)
    assert "docs/researchers.md" in study_help and "README" not in study_help
    assert "## Studies and import" in (ROOT / "docs" / "researchers.md").read_text(encoding="utf-8")
    assert "docs/annotators.md" in str(PairsImportForm.base_fields["file"].help_text)
