"""What the dashboard's tests share: the seeded campaign, the service and an in-process client.

A module of its own, not the conftest: pytest imports a conftest under its own name, so a
value defined there and imported by a test module would be made twice."""

from __future__ import annotations

import uuid
import wave
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from glyphoxa_pipelines.config import Settings
from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import (
    Campaign,
    CampaignStore,
    Entity,
    KnowledgeGraph,
    Recap,
    RecapStore,
    Relationship,
    SessionStore,
    SessionSummary,
    SummaryStore,
)

T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
TOKEN = "dash-test-token-" + uuid.uuid4().hex[:8]


@dataclass
class Seed:
    campaign_id: str
    ended: str
    live: str
    pending_fact: int
    hidden_fact: int
    secret_fact: int
    public_fact: int
    audio: Path
    ids: dict[str, str] = field(default_factory=dict)


def write_wav(path: Path, seconds: float = 0.5) -> None:
    """A real (silent) WAV, so the browser's decoder accepts it."""
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00" * int(8000 * seconds))


def seed_dashboard(url: str, folder: Path) -> Seed:
    """A campaign with three NPCs, a place, an item; one pending, one hidden, one secret and
    one public fact; an ended session with a summary and a recap with audio, and a live one."""
    cid = "dash-" + uuid.uuid4().hex[:10]
    audio = folder / f"{cid}-recap.wav"
    write_wav(audio)
    with Database(url, max_size=2).open() as db:
        CampaignStore(db).upsert(Campaign(cid, f"Dashboard {cid}", "The Sunblade affair"))
        kg = KnowledgeGraph(db)
        for eid, etype, name, aliases in (
            ("thaldrin", "npc", "Thaldrin Ashvale", ["Thal"]),
            ("mirela", "npc", "Mirela Quickfingers", []),
            ("borga", "npc", "Borga", []),
            ("smith", "npc", "The Smith", ["Old Smith"]),
            ("tankard", "place", "Gilded Tankard", []),
            ("sunblade", "item", "Sunblade", []),
        ):
            kg.add_entity(Entity(cid, eid, etype, name, aliases,
                                 {"role": "smith"} if eid == "thaldrin" else {}))
        log = SessionStore(db)
        ended = log.start_session(cid, f"{cid}-s1", title="Night 1", started_at=T0,
                                  status="ended").id
        live = log.start_session(cid, f"{cid}-s2", title="Night 2",
                                 started_at=T0 + timedelta(days=7)).id

        def fact(src: str, rel: str, dst: str, **kw: Any) -> int:
            r = kg.add_relationship(Relationship(cid, src, dst, rel, session_id=ended, **kw))
            assert r.id is not None
            return r.id

        public = fact("thaldrin", "works_at", "tankard")
        pending = fact("thaldrin", "owes_debt_to", "borga", status="pending", confidence=0.4,
                       provenance="extracted", evidence="Thaldrin owes Borga thirty gold.")
        hidden = fact("mirela", "stole", "sunblade", visibility="hidden")
        secret = fact("borga", "distrusts", "mirela", visibility="secret")
        fact("smith", "works_at", "tankard")
        SummaryStore(db).save(SessionSummary(ended, cid, "The party met Thaldrin at the inn.",
                                             ["Thaldrin owes Borga"], "test"))
        RecapStore(db).save(Recap(ended, cid, "Previously: the Sunblade vanished.",
                                  str(audio), "test"))
    return Seed(cid, ended, live, pending, hidden, secret, public, audio)


def make_service(url: str, home: Path) -> Any:
    from realtime.service import MemoryService

    return MemoryService(url, settings=Settings.from_env(), spool_dir=home / "spool",
                         probe_interval_s=0.2)


def client_for(svc: Any, token: str | None = None) -> httpx.AsyncClient:
    from realtime.api.app import create_app

    app = create_app(svc, mount_mcp=False, open_service=False, token=token)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                             base_url="http://127.0.0.1")


@dataclass
class LiveServer:
    url: str
    reprocess_log: Path
