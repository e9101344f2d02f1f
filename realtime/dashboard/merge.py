"""The DM merges a duplicate entity into the one to keep, in one transaction.

Consolidation's merge (`pipeline_rows.consolidation_rows.merge_entity_op`) already re-points
facts, drops the duplicate's facts the kept entity has, and moves chunk mentions; it leaves DM
rows alone, since nightly runs must never undo the DM. Here the DM is the one asking, so after
it the kept entity gets the duplicate's names as aliases and the duplicate is deleted whoever
made them: the same store operations, run as a DM edit.
"""

from __future__ import annotations

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import InvalidInputError, KnowledgeGraph, NotFoundError
from glyphoxa_pipelines.memory.pipeline_rows.consolidation_rows import merge_entity_op


def merged_aliases(keep_name: str, keep_aliases: list[str], dup_names: list[str]) -> list[str]:
    """The kept entity's aliases plus the duplicate's names, once each (case-insensitive),
    never its own name; order kept, so the DM's first alias stays first."""
    seen = {keep_name.strip().lower()}
    out: list[str] = []
    for name in [*keep_aliases, *dup_names]:
        key = name.strip().lower()
        if key and key not in seen:
            seen.add(key)
            out.append(name.strip())
    return out


def merge_entities_op(graph: KnowledgeGraph, campaign_id: str, dup_id: str, keep_id: str) -> Op:
    """Fold `dup_id` into `keep_id`; returns the kept entity."""
    if dup_id == keep_id:
        raise InvalidInputError("merge: choose a different entity to keep")
    dup = yield from KnowledgeGraph.get_entity.op(graph, campaign_id, dup_id)
    keep = yield from KnowledgeGraph.get_entity.op(graph, campaign_id, keep_id)
    for ent, eid in ((dup, dup_id), (keep, keep_id)):
        if ent is None:
            raise NotFoundError(f"unknown entity {eid!r} in campaign {campaign_id!r}")
    yield from merge_entity_op(campaign_id, dup_id, keep_id)
    aliases = merged_aliases(keep.name, keep.aliases, [dup.name, *dup.aliases])
    kept = yield from KnowledgeGraph.update_entity.op(graph, campaign_id, keep_id,
                                                      aliases=aliases)
    yield from KnowledgeGraph.delete_entity.op(graph, campaign_id, dup_id)
    return kept
