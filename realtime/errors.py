"""The realtime service's message for a database it cannot use (a timeout of one statement is
`glyphoxa_pipelines.db.StatementTimeoutError`: not an outage).

A leaf module (it imports nothing of the service), so every module that reports the degraded
state can name it without importing the guarded database.
"""

from __future__ import annotations

DEGRADED = "memory degraded: PostgreSQL is unreachable"

