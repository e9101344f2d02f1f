"""Campaign-level steps: the name list for correction / STT boosting, and nightly consolidation.

Consolidation looks across sessions, which no per-session step can: duplicate entities that
different sessions created, contradictions between sessions, how many sessions support a fact
(its confidence and so whether it needs DM review), and the story so far.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import KnowledgeGraph, RecapStore
from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.memory.pipeline_rows import (
    consolidation_rows,
    knowledge_rows,
    ownership,
    session_rows,
    summary_rows,
)
from glyphoxa_pipelines.pipeline.outcomes import CheckOutcome, StepOutcome
from glyphoxa_pipelines.pipeline.services import PipelineServices

_PRECEDENCE = {"dm": 0, "import": 1, "extracted": 2}
WEAK_TYPES = frozenset({"concept"})


def campaign_name_list(services: PipelineServices, campaign_id: str) -> StepOutcome:
    """Every entity name and alias (canonical first), published for the realtime corrector
    and STT keyword boosting."""
    from glyphoxa_pipelines.correction import keyword_list
    from glyphoxa_pipelines.memory.correction_targets import correction_entities_op

    entities = services.db.run(correction_entities_op(campaign_id))
    keywords = keyword_list(entities)
    changed = services.db.run(session_rows.set_campaign_keywords_op(campaign_id, keywords))
    out = StepOutcome("campaign_name_list")
    out.metadata = {
        "entities": len(entities),
        "keywords": len(keywords),
        "changed": bool(changed),
        "preview": ", ".join(keywords[:25]),
    }
    return out


def duplicate_pairs(entities: list[Entity]) -> list[tuple[str, str]]:
    """(duplicate, keep) pairs: extracted entities whose name is another entity's name or
    alias (case, accents, spaces and apostrophes ignored) with a compatible type. The kept one
    is the DM's or the import's when there is one, else the oldest."""
    from glyphoxa_pipelines.correction import normalize

    by_form: dict[str, list[Entity]] = defaultdict(list)
    for e in entities:
        if e.type == ownership.EPISODE_TYPE:
            continue
        for form in {normalize(e.name), *(normalize(a) for a in e.aliases)}:
            if form:
                by_form[form].append(e)

    def rank(e: Entity) -> tuple[Any, ...]:
        return (_PRECEDENCE.get(e.provenance, 3), e.created_at is None, e.created_at, e.id)

    pairs: dict[str, str] = {}
    for e in sorted(entities, key=rank, reverse=True):
        if e.provenance != "extracted" or e.type == ownership.EPISODE_TYPE or e.id in pairs:
            continue
        rivals = [
            o
            for o in by_form.get(normalize(e.name), [])
            if o.id != e.id
            and o.id not in pairs
            and (o.type == e.type or e.type in WEAK_TYPES or o.type in WEAK_TYPES)
            and rank(o) < rank(e)
        ]
        if rivals:
            pairs[e.id] = min(rivals, key=rank).id

    # follow chains (a -> b -> c) so every duplicate points at a survivor
    def root(eid: str) -> str:
        seen = set()
        while eid in pairs and eid not in seen:
            seen.add(eid)
            eid = pairs[eid]
        return eid

    return sorted((dup, root(keep)) for dup, keep in pairs.items())


def _consolidate_op(campaign_id: str, pairs: list[tuple[str, str]], threshold: float) -> Op:
    from glyphoxa_pipelines.processing.extraction import contradictions

    merged_facts = 0
    for dup, keep in pairs:
        merged_facts += yield from consolidation_rows.merge_entity_op(campaign_id, dup, keep)
    current = yield from knowledge_rows.current_facts_op(campaign_id)
    invalidated = flagged = 0
    gone: set[int] = set()
    for c in contradictions(current, current):
        if c.old.id == c.new.id or c.new.id in gone or c.old.id in gone:
            continue  # a tie must not invalidate both sides
        if c.protected:
            flagged += 1
            continue
        ok = yield from knowledge_rows.invalidate_fact_op(
            c.old.id, c.new.id, c.new.observed_at or c.new.valid_from
        )
        if ok:
            gone.add(c.old.id)
        invalidated += int(ok)
    rescored = yield from consolidation_rows.recompute_fact_confidence_op(campaign_id, threshold)
    return {
        "entities_merged": len(pairs),
        "facts_repointed": merged_facts,
        "contradictions_invalidated": invalidated,
        "contradictions_against_dm_facts": flagged,
        "facts_rescored": rescored,
    }


def story_so_far(summaries: list[dict[str, Any]]) -> str:
    """The campaign's story: each summarised session's title and its key points, in order."""
    try:
        from glyphoxa_pipelines.processing import recaps

        compose = getattr(recaps, "story_so_far", None)
    except ImportError:
        compose = None
    if compose is not None:
        return compose(summaries)
    parts = []
    for n, s in enumerate(summaries, 1):
        points = list(s.get("key_points") or [])[:4] or [s["summary"][:400]]
        title = s.get("title") or s["id"]
        parts.append(f"Session {n} ({title}): " + " ".join(points))
    return "\n\n".join(parts)


def campaign_consolidation(services: PipelineServices, campaign_id: str) -> StepOutcome:
    """Merge duplicates, resolve contradictions, recompute confidence and the review queue,
    write the story so far: one transaction for the graph, then the story."""
    settings = services.db.run(session_rows.campaign_settings_op(campaign_id))
    threshold = float(settings["review_threshold"])
    entities = services.db.run(knowledge_rows.campaign_entities_op(campaign_id))
    pairs = duplicate_pairs(entities)
    stats = services.db.run(_consolidate_op(campaign_id, pairs, threshold))
    summaries = services.db.run(summary_rows.campaign_summaries_op(campaign_id))
    story = story_so_far(summaries)
    RecapStore(services.db).save_story(
        campaign_id,
        story,
        {"sessions": [s["id"] for s in summaries], "merged": [list(p) for p in pairs]},
    )
    queue = KnowledgeGraph(services.db).review_queue(campaign_id, limit=10_000)
    dangling = 0
    for sid in services.db.run(session_rows.campaign_session_ids_op(campaign_id)):
        counts = services.db.run(knowledge_rows.dangling_facts_op(campaign_id, sid))
        dangling += int(counts["dangling"])
    out = StepOutcome("campaign_consolidation")
    out.metadata = {
        **stats,
        "review_queue": len(queue),
        "sessions_in_story": len(summaries),
        "story_words": len(story.split()),
        "story_preview": story[:300],
    }
    out.checks.append(
        CheckOutcome(
            "campaign_facts_reference_existing_entities",
            dangling == 0,
            f"{dangling} facts reference a missing entity",
        )
    )
    return out


CAMPAIGN_STEPS = {
    "campaign_name_list": campaign_name_list,
    "campaign_consolidation": campaign_consolidation,
}
CAMPAIGN_ASSETS: tuple[str, ...] = tuple(CAMPAIGN_STEPS)
