from django.apps import AppConfig


class AdaptiveConfig(AppConfig):
    name = "annotation.adaptive"
    label = "adaptive"
    verbose_name = "Adaptive allocation"
