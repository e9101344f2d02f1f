"""Which rows a session's pipeline owns: the one definition every pipeline write composes.

A session's pipeline owns the rows with provenance 'extracted' and that session_id, except DM
decisions: facts the DM confirmed (dm_confirmed) or rejected (status 'rejected') survive
reprocessing, and an entity is only deleted when no fact outside the session still
references it. The episode entity of a session belongs to its summary step, not to
extraction. DM-made and imported rows are never the pipeline's.

The conditions are SQL text over a table alias, composed into the statements that replace,
invalidate, re-score or merge pipeline rows, so the rule cannot drift between them.
"""

from __future__ import annotations

EPISODE_TYPE = "episode"


def _column(alias: str, column: str) -> str:
    return f"{alias}.{column}" if alias else column


def pipeline_entity(alias: str = "") -> str:
    """SQL condition: the pipeline made this entity (it may replace, merge or delete it)."""
    return f"{_column(alias, 'provenance')} = 'extracted'"


def pipeline_fact(alias: str = "") -> str:
    """SQL condition: the pipeline may change, invalidate or delete this fact: extracted, and
    not a DM decision (confirmed or rejected)."""
    return (
        f"{_column(alias, 'provenance')} = 'extracted' AND NOT {_column(alias, 'dm_confirmed')}"
        f" AND {_column(alias, 'status')} <> 'rejected'"
    )
