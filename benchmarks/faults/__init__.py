"""Fault scripts: kill workers, stop the broker, restart the database — and check nothing is lost."""
