"""A campaign's prepared names, per process: the phonetic correction index and the mention
finder that pre-fetch matches partials against.

Building them costs milliseconds per campaign, so they are built once and rebuilt only when the
campaign's entities changed: checked in the background at most every `refresh_s`, and at once
when a change is announced, so the hot path never waits for a rebuild.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any

from glyphoxa_pipelines.correction import NameIndex
from glyphoxa_pipelines.db import DatabaseUnavailableError
from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import Entity
from glyphoxa_pipelines.memory.correction_targets import correction_entities_op
from glyphoxa_pipelines.processing.mentions import MentionFinder
from realtime import fact_search as fs
from realtime.background import Background
from realtime.guarded_db import GuardedDatabase


@dataclass(slots=True)
class Names:
    """A campaign's prepared names: the correction index and the mention finder."""

    index: NameIndex
    finder: MentionFinder
    version: tuple[int, Any]
    checked: float
    entities: dict[str, Entity] = field(default_factory=dict)


class NameCache:
    def __init__(self, db: GuardedDatabase, background: Background, refresh_s: float) -> None:
        self._db = db
        self._background = background
        self.refresh_s = refresh_s
        self._names: dict[str, Names] = {}
        self._loading: dict[str, asyncio.Task[Names]] = {}
        self._refreshing: set[str] = set()

    async def _load(self, campaign_id: str) -> Names:
        def load() -> Op:
            version = yield from fs.names_version_op(campaign_id)
            entities = yield from fs.all_entities_op(campaign_id)
            targets = yield from correction_entities_op(campaign_id)
            return version, entities, targets

        version, entities, targets = await self._db.run(load())

        def build() -> Names:
            return Names(
                index=NameIndex(targets),
                finder=MentionFinder.from_entities(entities),
                version=version,
                checked=time.monotonic(),
                entities={e.id: e for e in entities},
            )

        names = await asyncio.to_thread(build)
        self._names[campaign_id] = names
        return names

    async def get(self, campaign_id: str) -> Names | None:
        """The campaign's prepared names (None while degraded and never loaded); a stale
        check is scheduled in the background when `refresh_s` has passed."""
        names = self._names.get(campaign_id)
        if names is None:
            if self._db.degraded:
                return None
            task = self._loading.get(campaign_id)
            if task is None:
                task = asyncio.ensure_future(self._load(campaign_id))
                self._loading[campaign_id] = task
                task.add_done_callback(lambda _t: self._loading.pop(campaign_id, None))
            try:
                return await asyncio.shield(task)
            except DatabaseUnavailableError:
                return None
        if time.monotonic() - names.checked > self.refresh_s and not self._db.degraded:
            names.checked = time.monotonic()
            self._background.spawn(self._refresh(campaign_id, names.version))
        return names

    def announce(self, campaign_id: str) -> None:
        """A change to the campaign's entities was announced: rebuild in the background, if
        this process holds its names at all."""
        if campaign_id in self._names and not self._db.degraded:
            self._background.spawn(self._refresh(campaign_id, None))

    async def _refresh(self, campaign_id: str, version: tuple[int, Any] | None) -> None:
        """Rebuild when the fingerprint moved (always, for `version=None`). One rebuild per
        campaign at a time: a burst of announcements during a pipeline run costs one."""
        if campaign_id in self._refreshing:
            return
        self._refreshing.add(campaign_id)
        try:
            with contextlib.suppress(DatabaseUnavailableError):
                current = await self._db.run(fs.names_version_op(campaign_id))
                if current != version:
                    await self._load(campaign_id)
        finally:
            self._refreshing.discard(campaign_id)

    def invalidate(self, campaign_id: str) -> None:
        self._names.pop(campaign_id, None)
