from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "metrics.dashboard"
    label = "dashboard"
    verbose_name = "Study dashboards"

    def ready(self) -> None:
        from config.recovery import requeuer_register

        requeuer_register("metrics.dashboard.services.queueing.plans_requeue_stale", "plan(s)")
