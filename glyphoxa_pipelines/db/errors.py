"""How a database failure is classified, by type (callers never parse messages).

An outage and a statement that ran past its own time limit call for different reactions: the
first may switch a service to degraded mode (spool writes, serve cached context), the second
only means this one query was too expensive; the server is fine. Both runners raise these.
"""

from __future__ import annotations

import psycopg

# SQLSTATE classes that mean the server cannot be used right now: connection exception,
# insufficient resources, operator intervention (shutdown, cannot connect now), system error.
_OUTAGE_CLASSES = ("08", "53", "57", "58")


class DatabaseError(RuntimeError):
    """Base of the failures the runners classify."""


class DatabaseUnavailableError(DatabaseError):
    """PostgreSQL cannot be reached; callers may degrade (spool writes, serve cache)."""


class StatementTimeoutError(DatabaseError):
    """A statement was cancelled by its `statement_timeout` (psycopg `QueryCanceled`): the
    server answered, this query was just too slow. Not an outage."""


def is_outage(exc: BaseException) -> bool:
    """Whether a psycopg failure means PostgreSQL cannot be used (no answer, a lost or refused
    connection, a server shutting down or out of resources), as opposed to one statement
    failing on a server that answered: a value past a limit ("string is too long for
    tsvector"), a lock wait, a deadlock. psycopg files all of these under OperationalError;
    only an outage may switch a service to degraded mode."""
    if isinstance(exc, psycopg.InterfaceError):
        return True
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate
    return state is None or (state[:2] in _OUTAGE_CLASSES and state != "57014")
