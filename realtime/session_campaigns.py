"""Which campaign a session belongs to, cached per process: a session never changes campaign,
so the first answer stays true and every later call saves a round trip."""

from __future__ import annotations

from glyphoxa_pipelines.memory import NotFoundError, SessionStore
from realtime.guarded_db import GuardedDatabase


class SessionCampaigns:
    def __init__(self, db: GuardedDatabase, sessions: SessionStore) -> None:
        self._db = db
        self._sessions = sessions
        self._known: dict[str, str] = {}

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
