"""How a database failure is classified, by type (callers never parse messages).

An outage and a statement that ran past its own time limit call for different reactions: the
first may switch a service to degraded mode (spool writes, serve cached context), the second
only means this one query was too expensive; the server is fine. Both runners raise these.
"""

from __future__ import annotations


class DatabaseError(RuntimeError):
    """Base of the failures the runners classify."""


class DatabaseUnavailableError(DatabaseError):
    """PostgreSQL cannot be reached; callers may degrade (spool writes, serve cache)."""


class StatementTimeoutError(DatabaseError):
    """A statement was cancelled by its `statement_timeout` (psycopg `QueryCanceled`): the
    server answered, this query was just too slow. Not an outage."""
