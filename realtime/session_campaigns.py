"""Which campaign a session belongs to, cached per process: a session never changes campaign,
so the first answer stays true and every later call saves a round trip. Bounded (least
recently used sessions are asked again) so a long-running service does not grow with every
session it ever saw."""

from __future__ import annotations

from cachetools import LRUCache

from glyphoxa_pipelines.memory import NotFoundError, SessionStore
from realtime.guarded_db import GuardedDatabase


class SessionCampaigns:
    def __init__(
        self, db: GuardedDatabase, sessions: SessionStore, max_sessions: int = 10_000
    ) -> None:
        self._db = db
        self._sessions = sessions
        self._known: LRUCache[str, str] = LRUCache(maxsize=max_sessions)

    def known(self, session_id: str) -> str | None:
        """The campaign if this process has seen the session, without a query."""
        return self._known.get(session_id)

    def remember(self, session_id: str, campaign_id: str) -> None:
        self._known[session_id] = campaign_id

    async def campaign_of(self, session_id: str) -> str:
        cid = self._known.get(session_id)
        if cid is None:
            session = await self._db.run(SessionStore.get_session.op(self._sessions, session_id))
            if session is None:
                raise NotFoundError(f"unknown session {session_id!r}")
            cid = self._known[session_id] = session.campaign_id
        return cid
