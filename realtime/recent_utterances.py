"""The last few utterances per session, kept in memory: what the degraded hot context adds to
the last good one while PostgreSQL is away (the spool has them too, but not in a readable
order per session). While degraded, an NPC gets only the lines it heard by the last scene it
read (`heard_offline`).

Bounded in both directions, since a long-running service sees sessions come and go: the least
recently written sessions are forgotten past `max_sessions`, and each kept line is cut to
`MAX_LINE_CHARS` (the degraded context shows a few lines, never a whole pasted transcript)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

from cachetools import LRUCache

from glyphoxa_pipelines.memory import NewEntry
from glyphoxa_pipelines.memory.presence import witnesses_of

MAX_LINE_CHARS = 2_000


class RecentUtterances:
    def __init__(self, limit: int, max_sessions: int = 1_024) -> None:
        self.limit = limit
        self._rings: LRUCache[str, deque[dict[str, Any]]] = LRUCache(maxsize=max_sessions)

    def remember(self, session_id: str, entries: Sequence[NewEntry]) -> None:
        ring = self._rings.get(session_id)
        if ring is None:
            ring = self._rings[session_id] = deque(maxlen=self.limit)
        known = {r["idempotency_key"] for r in ring}
        for e in entries:
            if e.idempotency_key in known:
                continue  # a retry: said once
            known.add(e.idempotency_key)
            ring.append(
                {
                    "speaker_name": e.speaker_name,
                    "speaker_id": e.speaker_id,
                    "speaker_role": e.speaker_role,
                    "npc_id": e.npc_id,
                    "text": e.text[:MAX_LINE_CHARS],
                    "spoken_at": e.spoken_at,
                    "idempotency_key": e.idempotency_key,
                }
            )

    def of(self, session_id: str) -> Iterable[dict[str, Any]]:
        return self._rings.get(session_id, ())


def heard_offline(line: dict[str, Any], npc_id: str, scene: dict[str, Any]) -> bool:
    """Whether `npc_id` heard a remembered line, judged as the database will judge it once the
    line is written (`presence.witnesses_of`), by the last scene the NPC's context read: the
    database, which holds the current scene and the DM's edits, is away."""
    witnesses = witnesses_of(scene, line["speaker_role"], line["speaker_id"], line["npc_id"])
    return witnesses is None or npc_id in witnesses
