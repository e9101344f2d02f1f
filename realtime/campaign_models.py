"""Which embedding model a campaign's vectors are searched under, and the query embedder that
matches it.

A campaign's chunks and turns are compared with a query under the campaign's ACTIVE model
(`campaigns.active_embedding_model`), which the pipeline switches only once a backfill has
embedded every chunk under the new one. The service's configured model is just one of the
models it can embed queries for: searching under it would find nothing after a switch, and a
query compared with another model's vectors of the same dimension (float and int8 MiniLM)
ranks nonsense without any error. So each search asks which model the campaign is under and
embeds its query with that model's encoder; the vector, its model and every similarity of the
search travel together (`session_search.legs.QueryVector`).

The answer is cached per campaign, so the live path pays no round trip for it. A switch is
announced on the graph channel (`campaigns:<id>`, migration 026) and drops the campaign's
entry; while the change listener is down nothing is cached (as the identity cache), and a
look-up that raced an announcement is not stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cachetools import LRUCache

from glyphoxa_pipelines.db.operations import Op, fetch_one
from realtime.query_embedding import QueryEmbedder, QueryEmbedders


class QueryModelUnavailableError(LookupError):
    """The campaign's vectors are under a model this service cannot embed queries for."""


@dataclass(frozen=True, slots=True)
class ActiveModel:
    """A campaign's active embedding model; `stored` False when no vector was ever written
    under it (the model is not registered): the vector leg has nothing to search."""

    name: str
    stored: bool


def active_model_op(campaign_id: str) -> Op[ActiveModel | None]:
    """The campaign's active model and whether any vector is stored under it; None for an
    unknown campaign."""
    row = yield fetch_one(
        """SELECT c.active_embedding_model AS name, m.name IS NOT NULL AS stored
           FROM campaigns c LEFT JOIN embedding_models m ON m.name = c.active_embedding_model
           WHERE c.id = %(c)s""",
        {"c": campaign_id},
    )
    return ActiveModel(str(row["name"]), bool(row["stored"])) if row is not None else None


class CampaignModels:
    """Campaign -> the query embedder of its active model (cached, see the module's note)."""

    def __init__(self, db: Any, embedders: QueryEmbedders, max_campaigns: int = 4096) -> None:
        self._db = db  # anything with `async run(op, transaction=...)`
        self.embedders = embedders
        self._known: LRUCache[str, ActiveModel] = LRUCache(maxsize=max_campaigns)
        self.enabled = False
        self.generation = 0

    async def active(self, campaign_id: str) -> ActiveModel | None:
        """The campaign's active model (None: unknown campaign), cached while announced."""
        known = self._known.get(campaign_id) if self.enabled else None
        if known is not None:
            return known
        generation = self.generation
        found = await self._db.run(active_model_op(campaign_id), transaction=False)
        # Only a searchable answer is kept: a campaign created, or a model's first vectors
        # written, after this look-up announce nothing.
        if found is not None and found.stored and self.enabled and generation == self.generation:
            self._known[campaign_id] = found
        return found

    async def query_embedder(self, campaign_id: str) -> QueryEmbedder | None:
        """The embedder for this campaign's queries; None when the campaign has no vectors to
        search (unknown, or nothing stored under its active model). Raises
        `QueryModelUnavailableError` when its vectors are under a model this service has no
        query encoder for."""
        model = await self.active(campaign_id)
        if model is None or not model.stored:
            return None
        embedder = self.embedders.get(model.name)
        if embedder is None:
            raise QueryModelUnavailableError(
                f"campaign {campaign_id!r} is searched under embedding model {model.name!r}, "
                f"which this service cannot embed queries for (it is configured for "
                f"{self.embedders.default.model_id!r}); configure that model's embedder")
        return embedder

    def invalidate(self, campaign_id: str) -> None:
        """A campaign's active model changed (any process)."""
        self.generation += 1
        self._known.pop(campaign_id, None)

    def reset(self, *, enabled: bool) -> None:
        """The change listener (dis)connected: announcements may have been missed."""
        self.generation += 1
        self._known.clear()
        self.enabled = enabled
