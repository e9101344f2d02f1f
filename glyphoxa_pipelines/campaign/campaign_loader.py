"""Load a parsed campaign file into the memory store in one transaction.

Idempotent: the file is the source of truth for rows with provenance "import" — loading the
same file twice changes nothing, a changed file updates what changed and removes the imported
entities and facts the file no longer has. DM-made and extracted rows are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from glyphoxa_pipelines.campaign.campaign_file import CampaignFile, reference_table
from glyphoxa_pipelines.db.operations import Op, execute, fetch_all, operation
from glyphoxa_pipelines.memory.campaigns import CampaignStore
from glyphoxa_pipelines.memory.graph_entities import upsert_entity_op
from glyphoxa_pipelines.memory.graph_facts import upsert_relationship_op
from glyphoxa_pipelines.memory.knowledge_graph import KnowledgeGraph
from glyphoxa_pipelines.memory.models import Campaign, Entity, NpcProfile, Relationship


@dataclass(frozen=True)
class LoadReport:
    campaign_id: str
    entities: int
    relationships: int
    npcs: int
    entities_changed: int
    removed_entities: int
    removed_relationships: int


class CampaignLoader:
    def __init__(self, db: Any) -> None:
        self.db = db
        self.campaigns = CampaignStore(db)
        self.graph = KnowledgeGraph(db)

    @operation
    def load(self, parsed: CampaignFile) -> Op:
        info = parsed.campaign
        cid = info.id
        yield from CampaignStore.upsert.op(
            self.campaigns,
            Campaign(cid, info.name, info.description, info.system, info.review_threshold),
        )
        before = yield fetch_all(
            "SELECT id, updated_at FROM entities WHERE campaign_id = %s", (cid,)
        )
        stamps = {r["id"]: r["updated_at"] for r in before}
        changed = 0
        for spec in parsed.entities:
            ent = yield from upsert_entity_op(
                Entity(
                    campaign_id=cid,
                    id=spec.entity_id,
                    type=spec.type,
                    name=spec.name,
                    aliases=list(spec.aliases),
                    attributes=dict(spec.attributes),
                    provenance="import",
                )
            )
            changed += stamps.get(ent.id) != ent.updated_at
        refs = reference_table(parsed)
        rel_ids: list[int] = []
        for spec in parsed.relationships:
            known_by: list[str] = []
            visibility = spec.visibility
            if isinstance(visibility, list):
                known_by = [refs[n.lower()] for n in visibility]
                visibility = "secret"
            rel = yield from upsert_relationship_op(
                Relationship(
                    campaign_id=cid,
                    source_id=refs[spec.source.lower()],
                    target_id=refs[spec.target.lower()],
                    rel_type=spec.type,
                    attributes=dict(spec.attributes),
                    confidence=spec.confidence,
                    provenance="import",
                    dm_confirmed=True,
                    visibility=visibility,
                    known_by=known_by,
                    evidence=spec.evidence,
                ),
                protect_confirmed=False,
            )
            rel_ids.append(int(rel.id))  # type: ignore[arg-type]
        for npc in parsed.npcs:
            yield from KnowledgeGraph.upsert_npc_profile.op(
                self.graph,
                NpcProfile(
                    campaign_id=cid,
                    entity_id=refs[npc.name.lower()],
                    personality=npc.personality,
                    speaking_style=npc.speaking_style,
                    emotional_state=npc.emotional_state,
                    behavior_rules=list(npc.behavior_rules),
                    secret_knowledge=list(npc.secret_knowledge),
                    voice=dict(npc.voice),  # type: ignore[arg-type]
                ),
            )
        removed_rels = yield execute(
            """DELETE FROM relationships WHERE campaign_id = %s AND provenance = 'import'
                   AND NOT (id = ANY(%s))""",
            (cid, rel_ids),
        )
        removed_ents = yield execute(
            """DELETE FROM entities WHERE campaign_id = %s AND provenance = 'import'
                   AND NOT (id = ANY(%s))""",
            (cid, [e.entity_id for e in parsed.entities]),
        )
        return LoadReport(
            campaign_id=cid,
            entities=len(parsed.entities),
            relationships=len(parsed.relationships),
            npcs=len(parsed.npcs),
            entities_changed=changed,
            removed_entities=removed_ents,
            removed_relationships=removed_rels,
        )
