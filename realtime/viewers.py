"""Who is asking: the one rule for the viewer every read path takes (tools over HTTP and MCP,
pre-fetch, the hot context, Discord's /npc).

Secrets are shown to the NPCs party to them or told of them, so whatever id a caller binds is
compared with fact ends and `known_by`. A caller that binds an item, an event, a place, an id
the campaign does not have or another campaign's NPC must not see through that entity's eyes:
the viewer is an NPC of the call's campaign, or nobody.

- no id, an empty or a blank one: no NPC bound, public facts only (never an error: it is how
  a caller without an NPC asks);
- an id that is no entity of the campaign: `NotFoundError` ("unknown NPC", 404);
- an entity that is not an NPC: `InvalidInputError` ("... is not an NPC", 422).

The entity's type is cached in the graph cache, dropped with the campaign's other entries
when PostgreSQL announces a change, so a retyped or deleted entity stops being a viewer at once
and a known NPC costs no round trip.
"""

from __future__ import annotations

from glyphoxa_pipelines.memory import InvalidInputError, NotFoundError
from realtime.graph_cache import GraphCache
from realtime.guarded_db import GuardedDatabase

NPC_TYPE = "npc"

_ENTITY_TYPE = "SELECT type FROM entities WHERE campaign_id = %(c)s AND id = %(e)s"


def bound_npc(npc_id: str | None) -> str | None:
    """The bound NPC id, or None when nothing is bound: empty and blank ids name nobody."""
    if npc_id is None or not npc_id.strip():
        return None
    return npc_id


def check_npc(campaign_id: str, npc_id: str, entity_type: str | None) -> None:
    """Refuse a viewer that is not an NPC of the campaign (`entity_type` None: no such
    entity)."""
    if entity_type is None:
        raise NotFoundError(f"unknown NPC {npc_id!r} in campaign {campaign_id!r}")
    if entity_type != NPC_TYPE:
        raise InvalidInputError(
            f"{npc_id!r} is not an NPC (its type is {entity_type!r}): only an NPC of the "
            "campaign can be the viewer"
        )


class Viewers:
    def __init__(self, db: GuardedDatabase, cache: GraphCache) -> None:
        self._db = db
        self._cache = cache

    async def resolve(self, campaign_id: str, npc_id: str | None) -> str | None:
        """The NPC the call sees as, or None for public only; raises for anything else."""
        npc = bound_npc(npc_id)
        if npc is None:
            return None
        key = ("entity-type", npc)
        entity_type = self._cache.get(campaign_id, key)
        if entity_type is None:
            generation = self._cache.generation
            row = await self._db.fetch_row(_ENTITY_TYPE, {"c": campaign_id, "e": npc})
            entity_type = row["type"] if row else None
            if entity_type is not None:
                self._cache.put(campaign_id, key, entity_type, generation)
        check_npc(campaign_id, npc, entity_type)
        return npc
