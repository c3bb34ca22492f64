from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "metrics.reports"
    label = "reports"

    def ready(self) -> None:
        from config.recovery import requeuer_register
        from metrics.reports.services.queueing import reports_requeue_stale

        requeuer_register(reports_requeue_stale, "report(s)")
