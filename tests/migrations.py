"""Moving the test database to a migration state and back, for the tests of data migrations."""

from __future__ import annotations

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate_to(targets):
    """Migrate the test database to ``targets`` ((app, migration) pairs); return the apps
    (historical models) of that state."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def migrate_to_latest() -> None:
    """Every app back at its latest migration (a data-migration test's ``finally``)."""
    migrate_to(MigrationExecutor(connection).loader.graph.leaf_nodes())
