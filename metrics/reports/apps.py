from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "metrics.reports"
    label = "reports"

    def ready(self) -> None:
        from config.recovery import requeuer_register

        requeuer_register("metrics.reports.services.queueing.reports_requeue_stale", "report(s)")
