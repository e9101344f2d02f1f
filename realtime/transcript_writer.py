"""The live transcript's write path: correct fantasy names inline, write to L1 in one
statement, or spool to disk while PostgreSQL is away; then let pre-fetch read what players and
the DM said.

Each session keeps its scene (`SceneMemory`: the names of its last turns, as corrected), and
each utterance is corrected with it, the speaker's own name and the party's (the campaign's
player characters, always in play): the context stage accepts a mishearing of a name in play
that it would not risk for any of the campaign's other names.

Raw text is always kept: an utterance of a session whose campaign is unknown (degraded) is
spooled uncorrected.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from cachetools import LRUCache

from glyphoxa_pipelines.correction import CORRECTOR_VERSION, correct
from glyphoxa_pipelines.correction.scene import SceneMemory, names_said, speaker_names
from glyphoxa_pipelines.db import DatabaseUnavailableError
from glyphoxa_pipelines.memory import InvalidInputError, NewEntry
from glyphoxa_pipelines.memory.session_log import insert_entries_op, validate_entry
from realtime.guarded_db import GuardedDatabase
from realtime.name_cache import NameCache, Names
from realtime.prefetch.prefetcher import Prefetcher
from realtime.recent_utterances import RecentUtterances
from realtime.session_campaigns import SessionCampaigns
from realtime.spool import Spool

# Above this many characters a batch is corrected off the event loop.
INLINE_CORRECTION_CHARS = 20_000
# Sessions whose scene is kept; the least recently written are forgotten first.
MAX_SCENES = 1_024


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class PreparedWrite:
    """Entries corrected and validated, not yet stored (`TranscriptWriter.prepare`)."""

    session_id: str
    campaign_id: str | None
    names: Names | None
    entries: list[NewEntry]
    out: list[dict[str, Any]]  # what the caller is told of each entry's correction


class TranscriptWriter:
    def __init__(
        self,
        db: GuardedDatabase,
        spool: Spool,
        campaigns: SessionCampaigns,
        names: NameCache,
        recent: RecentUtterances,
        prefetcher: Prefetcher,
    ) -> None:
        self._db = db
        self._spool = spool
        self._campaigns = campaigns
        self._names = names
        self._recent = recent
        self._prefetcher = prefetcher
        self._scenes: LRUCache[str, SceneMemory] = LRUCache(maxsize=MAX_SCENES)
        # the party of the last Names object seen per campaign (rebuilt when the names are)
        self._parties: LRUCache[str, tuple[Names, tuple[str, ...]]] = LRUCache(MAX_SCENES)

    async def prepare(self, session_id: str, items: Sequence[Any]) -> PreparedWrite:
        """A write's first half: the entries (EntryIn-like `items`) corrected in the session's
        scene (which takes their names now, so lines are corrected in the order they were
        said) and validated. A live turn needs only this before it answers; `store` may
        follow later, in order."""
        try:
            campaign_id: str | None = await self._campaigns.campaign_of(session_id)
        except DatabaseUnavailableError:
            campaign_id = None  # unknown while degraded: spool uncorrected, raw is kept
        names = await self._names.get(campaign_id) if campaign_id else None
        if names is not None and sum(len(i.text) for i in items) > INLINE_CORRECTION_CHARS:
            # A big batch (an import through the API, a pasted log) would hold the event loop
            # for seconds; utterances of live speech stay inline, where a thread hop costs more
            # than the correction.
            new, out = await asyncio.to_thread(
                self._corrected, session_id, campaign_id, items, names
            )
        else:
            new, out = self._corrected(session_id, campaign_id, items, names)
        for entry in new:
            if not entry.text.strip():
                raise InvalidInputError(f"entry {entry.idempotency_key!r}: text is empty")
            validate_entry(entry)  # a bad entry is refused here, never queued or spooled
        return PreparedWrite(session_id, campaign_id, names, new, out)

    async def store(self, prepared: PreparedWrite) -> dict[str, Any]:
        """A write's second half: the L1 insert (or the spool), then pre-fetch on the
        corrected text."""
        session_id, campaign_id, names, new = (prepared.session_id, prepared.campaign_id,
                                               prepared.names, prepared.entries)
        spooled = False
        written = 0
        if self._spool.depth or self._db.degraded:
            self._to_spool(session_id, new)
            spooled = True
        else:
            try:
                written = await self._insert(session_id, new)
            except DatabaseUnavailableError:
                self._to_spool(session_id, new)
                spooled = True
        self._recent.remember(session_id, new)
        triggers: list[dict[str, Any]] = []
        if names is not None and campaign_id is not None:
            for entry in new:
                if entry.speaker_role in ("player", "dm"):
                    triggers += self._prefetcher.schedule(
                        campaign_id, session_id, entry.text, None, names, corrected=True
                    )
        return {
            "session_id": session_id,
            "written": written,
            "duplicates": 0 if spooled else len(new) - written,
            "spooled": spooled,
            "spool_depth": self._spool.depth,
            "entries": prepared.out,
            "prefetch": triggers,
        }

    def _scene(self, session_id: str) -> SceneMemory:
        scene = self._scenes.get(session_id)
        if scene is None:
            scene = self._scenes[session_id] = SceneMemory()
        return scene

    def _party(self, campaign_id: str, names: Names) -> tuple[str, ...]:
        known = self._parties.get(campaign_id)
        if known is None or known[0] is not names:
            party = tuple(e.name for e in names.entities.values() if e.type == "player")
            known = self._parties[campaign_id] = (names, party)
        return known[1]

    def _corrected(
        self,
        session_id: str,
        campaign_id: str | None,
        items: Sequence[Any],
        names: Names | None,
    ) -> tuple[list[NewEntry], list[dict[str, Any]]]:
        """The entries to store, and what the caller is told of each correction. Each item is
        corrected in the session's scene, which then takes the names it said."""
        now = _now()
        new: list[NewEntry] = []
        out: list[dict[str, Any]] = []
        scene = self._scene(session_id) if names else None
        party = self._party(campaign_id, names) if names and campaign_id else ()
        for item in items:
            result = None
            if names is not None and scene is not None:
                voiced = names.entities.get(item.npc_id) if item.npc_id else None
                npc = voiced.name if voiced else None
                result = correct(
                    item.text,
                    names.index,
                    item.word_confidences,
                    scene=scene.names(
                        *speaker_names(names.index, item.speaker_name, npc),
                        *party,
                        speaker=item.speaker_id,
                    ),
                )
                scene.remember(names_said(result, names.index), speaker=item.speaker_id)
            corrections = [c.as_dict() for c in result.corrections] if result else []
            text = result.text if result else item.text
            new.append(NewEntry(
                idempotency_key=item.idempotency_key,
                text=text,
                raw_text=item.text,
                speaker_id=item.speaker_id,
                speaker_name=item.speaker_name,
                speaker_role=item.role,
                npc_id=item.npc_id,
                spoken_at=item.spoken_at or now,
                duration_s=item.duration_s,
                word_confidences=item.word_confidences,
                corrections=corrections,
                corrector_version=CORRECTOR_VERSION if names else None,
            ))
            out.append({"idempotency_key": item.idempotency_key, "text": text,
                        "raw_text": item.text, "corrections": corrections})
        return new, out

    async def _insert(self, session_id: str, entries: list[NewEntry]) -> int:
        """The store's idempotent live write, one statement without a transaction: one round
        trip per utterance (the session is known to exist: `campaign_of` checked; the entries
        were validated by `prepare`)."""
        return await self._db.run(insert_entries_op(session_id, entries), transaction=False)

    def _to_spool(self, session_id: str, entries: list[NewEntry]) -> None:
        records = []
        for e in entries:
            rec = asdict(e)
            rec["spoken_at"] = e.spoken_at.isoformat() if e.spoken_at else None
            records.append(rec)
        self._spool.append(session_id, records, spooled_at=_now().isoformat())
