from django.apps import AppConfig


class MetricsConfig(AppConfig):
    name = "metrics"
    verbose_name = "Metrics and statistics"

    def ready(self) -> None:
        # metrics.core cannot read Django settings; hand it the decompression cap
        # (web and worker processes both load the app).
        from django.conf import settings

        from config.recovery import requeuer_register
        from metrics.core import compressed

        compressed.DECOMPRESSED_MAX_BYTES = int(settings.PARAEVAL_DECOMPRESSED_MAX_BYTES)
        requeuer_register("metrics.services.runs.metric_runs_requeue_stale", "metric run(s)")
