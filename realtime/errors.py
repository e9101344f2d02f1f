"""The realtime service's own error and message for a database it cannot use.

A leaf module (it imports nothing of the service), so the guarded database that raises these
and the search legs that catch them need not import each other.
"""

from __future__ import annotations

DEGRADED = "memory degraded: PostgreSQL is unreachable"


class QueryTimeoutError(RuntimeError):
    """A statement hit the timeout we set for it: not an outage, so no degraded mode."""
