from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "metrics.reports"
    label = "reports"
