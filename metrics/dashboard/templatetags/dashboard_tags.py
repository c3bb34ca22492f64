"""``{% plan_summary study %}``: the last plan of a study in one paragraph (the design page shows it)."""

from __future__ import annotations

from django import template

from ..selectors import dashboard_for_study

register = template.Library()


@register.inclusion_tag("dashboard/_plan_summary.html")
def plan_summary(study) -> dict:
    d = dashboard_for_study(study=study)
    return {"study": study, "plan": (d.plan if d else None) or {}}
