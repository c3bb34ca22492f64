from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "metrics.dashboard"
    label = "dashboard"
    verbose_name = "Study dashboards"

    def ready(self) -> None:
        from config.recovery import requeuer_register
        from metrics.dashboard.services.queueing import plans_requeue_stale

        requeuer_register(plans_requeue_stale, "plan(s)")
