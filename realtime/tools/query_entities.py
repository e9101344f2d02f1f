"""`memory.query_entities`: entities by name, type or attribute, with the facts about them the
asking NPC may see (several hops deep for the first), and how the first connects to another."""

from __future__ import annotations

from typing import Any

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import Entity, KnowledgeGraph
from glyphoxa_pipelines.memory.fact_text import fact_sentence
from glyphoxa_pipelines.memory.graph_entities import entities_by_id_op
from glyphoxa_pipelines.memory.graph_traversal import neighbors_op
from glyphoxa_pipelines.memory.visibility import viewer
from realtime import fact_search as fs
from realtime.tools.args import QueryEntitiesArgs
from realtime.tools.context import ToolContext
from realtime.tools.results import entity_result
from realtime.tools.scope import ToolScope


async def run(ctx: ToolContext, args: QueryEntitiesArgs, scope: ToolScope) -> list[dict[str, Any]]:
    campaign = scope.campaign_id or ""
    view = viewer(scope.npc_id)
    graph = ctx.graph

    def op() -> Op:
        found: list[Entity] = []
        if args.name:
            exact = yield from KnowledgeGraph.resolve.op(graph, campaign, args.name)
            if exact is not None and (args.type is None or exact.type == args.type):
                found = [exact]
        if not found:
            found = yield from KnowledgeGraph.find_entities.op(
                graph, campaign, type=args.type, name=args.name,
                attributes=args.attributes, limit=args.limit,
            )
        found = found[: args.limit]
        out = []
        for i, ent in enumerate(found):
            if args.depth > 1 and i == 0:
                sub = yield from neighbors_op(
                    campaign, ent.id, args.depth, None, None, 30, view, None
                )
                facts = sub.facts
            else:
                facts = yield from fs.facts_about_op(campaign, ent.id, view, limit=15)
            item = entity_result(ent, facts)
            if args.related_to and i == 0:
                other = yield from KnowledgeGraph.resolve.op(graph, campaign, args.related_to)
                if other is not None:
                    path = yield from KnowledgeGraph.find_path.op(
                        graph, campaign, ent.id, other.id, max_depth=4, npc_id=view
                    )
                    ids = {r.source_id for r in path} | {r.target_id for r in path}
                    named = yield from entities_by_id_op(campaign, list(ids))
                    item["path_to"] = {
                        "entity": other.name,
                        "facts": [
                            fact_sentence(named[r.source_id].name, r.rel_type,
                                          named[r.target_id].name)
                            for r in path
                        ],
                    }
            out.append(item)
        return out

    return await ctx.run(op(), transaction=False)
