"""Database access: the embedded server or a DSN, pools, migrations, operation runners."""

from glyphoxa_pipelines.db.database import (
    AsyncDatabase,
    Database,
    DatabaseUnavailableError,
    open_database,
    resolve_url,
)
from glyphoxa_pipelines.db.migrations import MigrationError, migrate
from glyphoxa_pipelines.db.operations import Op, Statement, operation

__all__ = [
    "AsyncDatabase",
    "Database",
    "DatabaseUnavailableError",
    "MigrationError",
    "Op",
    "Statement",
    "migrate",
    "open_database",
    "operation",
    "resolve_url",
]
