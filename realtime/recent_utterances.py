"""The last few utterances per session, kept in memory: what the degraded hot context adds to
the last good one while PostgreSQL is away (the spool has them too, but not in a readable
order per session)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

from glyphoxa_pipelines.memory import NewEntry


class RecentUtterances:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._rings: dict[str, deque[dict[str, Any]]] = {}

    def remember(self, session_id: str, entries: Sequence[NewEntry]) -> None:
        ring = self._rings.setdefault(session_id, deque(maxlen=self.limit))
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
                    "text": e.text,
                    "spoken_at": e.spoken_at,
                    "idempotency_key": e.idempotency_key,
                }
            )

    def of(self, session_id: str) -> Iterable[dict[str, Any]]:
        return self._rings.get(session_id, ())
