"""Database access: the embedded server or a DSN, pools, migrations, operation runners."""

from glyphoxa_pipelines.db.database import (
    AsyncDatabase,
    Database,
    open_database,
    resolve_url,
)
from glyphoxa_pipelines.db.errors import (
    DatabaseError,
    DatabaseUnavailableError,
    StatementTimeoutError,
)
from glyphoxa_pipelines.db.migrations import MigrationError, migrate
from glyphoxa_pipelines.db.operations import Op, Statement, operation, read_operation

__all__ = [
    "AsyncDatabase",
    "Database",
    "DatabaseError",
    "DatabaseUnavailableError",
    "MigrationError",
    "Op",
    "Statement",
    "migrate",
    "open_database",
    "StatementTimeoutError",
    "operation",
    "read_operation",
    "resolve_url",
]
