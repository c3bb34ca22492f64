from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "metrics.dashboard"
    label = "dashboard"
    verbose_name = "Study dashboards"
