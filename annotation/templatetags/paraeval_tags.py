from django import template

register = template.Library()


@register.filter
def is_current_tab(tab: dict, path: str) -> bool:
    """A study tab is current on its own page and, except for the study's front
    page (the "Data" tab, which prefixes every study URL), on the pages below it."""
    url = tab["url"]
    if tab.get("name") == "annotation:study_detail":
        return path == url
    return path == url or path.startswith(url)
