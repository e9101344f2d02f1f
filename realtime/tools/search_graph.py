"""`memory.search_graph` (GraphRAG): passages about an entity and its neighbourhood, found
semantically or by words, through edges the asking NPC may see."""

from __future__ import annotations

from typing import Any

from glyphoxa_pipelines.db.operations import statement_timeout_op
from glyphoxa_pipelines.memory import GraphRAGQuerier, GraphScope, KnowledgeGraph
from glyphoxa_pipelines.memory.visibility import viewer
from realtime.tools.args import SearchGraphArgs
from realtime.tools.context import ToolContext
from realtime.tools.results import chunk_result
from realtime.tools.scope import ToolScope

# GraphRAG's full-text statement reads a whole neighbourhood's chunks: it gets this many times
# session search's full-text limit.
FULLTEXT_TIMEOUT_FACTOR = 4


async def run(ctx: ToolContext, args: SearchGraphArgs, scope: ToolScope) -> list[dict[str, Any]]:
    campaign = scope.campaign_id or ""
    ent = await ctx.run(KnowledgeGraph.resolve.op(ctx.graph, campaign, args.entity))
    if ent is None:
        return []
    # Passages are transcript: only chunks the NPC heard whole (None, unscoped: all).
    graph_scope = GraphScope(campaign, ent.id, depth=args.depth, npc_id=viewer(scope.npc_id),
                             listener=scope.npc_id)
    if args.depth == 0:
        graph_scope = GraphScope(campaign, entity_ids=(ent.id,), listener=scope.npc_id)
    if args.mode == "semantic":
        # The campaign's active model embeds the query: the passages are read under it.
        embedder = await ctx.campaign_models.query_embedder(campaign)
        if embedder is None:
            return []
        vec = await embedder.embed(args.query)
        hits = await ctx.run(
            GraphRAGQuerier.query_with_embedding.op(ctx.graph_rag, vec, args.top_k, graph_scope)
        )
        return [chunk_result(h, 1.0 - h.score, ["vector"]) for h in hits]
    hits = await ctx.run(statement_timeout_op(
        GraphRAGQuerier.query_with_context.op(ctx.graph_rag, args.query, graph_scope,
                                              limit=args.top_k),
        ctx.search.fulltext_timeout_ms * FULLTEXT_TIMEOUT_FACTOR,
    ))
    return [chunk_result(h, h.score, ["fulltext"]) for h in hits]
