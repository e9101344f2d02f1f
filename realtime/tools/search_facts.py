"""`memory.search_facts`: facts the asking NPC may see, by words, entity, relation and time
(as they stood at a given time, or with their history); plain word searches also match event
entities."""

from __future__ import annotations

from typing import Any

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import KnowledgeGraph
from glyphoxa_pipelines.memory.visibility import viewer
from realtime import fact_search as fs
from realtime.tools.args import SearchFactsArgs
from realtime.tools.context import ToolContext
from realtime.tools.results import event_result, fact_result
from realtime.tools.scope import ToolScope


async def run(ctx: ToolContext, args: SearchFactsArgs, scope: ToolScope) -> list[dict[str, Any]]:
    campaign = scope.campaign_id or ""
    view = viewer(scope.npc_id)
    graph = ctx.graph

    def op() -> Op:
        entity_id = None
        if args.entity:
            ent = yield from KnowledgeGraph.resolve.op(graph, campaign, args.entity)
            if ent is None:
                return []
            entity_id = ent.id
        facts = yield from fs.search_facts_op(
            campaign, view, query=args.query, entity_id=entity_id,
            rel_types=[args.relation] if args.relation else None, after=args.after,
            before=args.before, at=args.at, include_history=args.include_history,
            limit=args.limit,
        )
        out = [fact_result(f, started) for f, started in facts]
        if args.query and not args.entity and not args.relation:
            events = yield from fs.search_events_op(
                campaign, query=args.query, after=args.after, before=args.before,
                limit=max(1, args.limit - len(out)),
            )
            out += [event_result(e, started) for e, started in events]
        return out[: args.limit]

    return await ctx.run(op(), transaction=False)
