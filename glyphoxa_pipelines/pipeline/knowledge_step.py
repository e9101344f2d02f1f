"""Step 5 of the session chain: the entities and facts a session states, written into the
campaign's knowledge graph (`extracted_knowledge`, the Dagster asset of the same name).

A module of its own because writing facts is a rule set of its own: a re-run replaces what the
session's earlier extraction wrote, a newer fact invalidates an older one it contradicts (history
kept), a later session's fact wins over this one's, and a DM-made or DM-confirmed fact is never
overwritten: the contradicting fact goes to the review queue instead.

A new spelling of an entity the session does not own ("Stillben" resolved to another
session's "Stilben") is not written to the entity: the row is the DM's or another session's, a
reprocess could not take the alias back, and an alias becomes a target of the name corrector.
It is offered to the DM instead (`spelling_suggestions`, the review page), who accepts it as an
alias or dismisses it for good; until then later sessions resolve it again by sound.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import SessionStore
from glyphoxa_pipelines.memory.models import Entity, Relationship
from glyphoxa_pipelines.memory.pipeline_rows import knowledge_rows, session_rows
from glyphoxa_pipelines.pipeline.outcomes import CheckOutcome, StepOutcome
from glyphoxa_pipelines.pipeline.services import MemoizingEmbedder, PipelineServices


def _write_knowledge_op(
    campaign_id: str, session_id: str, entities: list[Entity], facts: list[Relationship],
    spellings: Mapping[str, Sequence[str]],
) -> Op:
    """One transaction: clear what this session's extraction wrote, write the new entities,
    insert facts (contradicted older facts invalidated, history kept; facts contradicting a
    DM-made/confirmed fact go to review instead), offer new spellings of known entities to the
    DM (an alias feeds the corrector, so only the DM makes one)."""
    from glyphoxa_pipelines.processing.extraction import contradictions

    cleared = yield from knowledge_rows.clear_session_knowledge_op(campaign_id, session_id)
    for entity in entities:
        yield from knowledge_rows.upsert_session_entity_op(entity, session_id)
    current = yield from knowledge_rows.current_facts_op(campaign_id)
    # Newer facts already in the graph (later sessions) win over this session's.
    superseded: dict[int, Relationship] = {}
    for c in contradictions(facts, current):
        superseded.setdefault(id(c.old), c.new)
    forward = contradictions(current, facts)
    protected_hits = {id(c.new) for c in forward if c.protected}
    plans: dict[int, list[Relationship]] = {id(f): [] for f in facts}
    for c in forward:
        if not c.protected:
            plans[id(c.new)].append(c.old)  # older facts this new fact invalidates
    prepared: list[Relationship] = []
    for fact in facts:
        newer = superseded.get(id(fact))
        if newer is not None:
            fact = replace(
                fact,
                invalidated_at=newer.observed_at or newer.valid_from,
                invalidated_by=newer.id,
            )
        elif id(fact) in protected_hits:
            fact = replace(
                fact, status="pending", attributes={**fact.attributes, "contradicts_dm": True}
            )
        prepared.append(fact)
    inserted = skipped = invalidated = 0
    for original, fact in zip(facts, prepared, strict=True):
        new_id = yield from knowledge_rows.insert_fact_op(fact)
        if new_id is None:
            skipped += 1
            continue
        inserted += 1
        if fact.invalidated_at is None:
            for old in plans[id(original)]:
                ok = yield from knowledge_rows.invalidate_fact_op(
                    old.id, new_id, fact.observed_at or fact.valid_from
                )
                invalidated += int(ok)
    offered = yield from knowledge_rows.suggest_spellings_op(campaign_id, session_id, spellings)
    return {
        **cleared,
        "spellings_offered": offered,
        "facts_inserted": inserted,
        "facts_skipped_existing": skipped,
        "facts_invalidated": invalidated,
        "facts_for_review_contradicting_dm": len(protected_hits),
        "facts_superseded_by_later_sessions": len(superseded),
    }


def extracted_knowledge(services: PipelineServices, session_id: str) -> StepOutcome:
    """Entities and facts the session states, resolved against the existing graph, written
    with provenance; low-confidence facts go to the DM review queue."""
    from glyphoxa_pipelines.processing import extraction

    info = services.db.run(session_rows.session_info_op(session_id))
    campaign_id = info["campaign_id"]
    campaign = services.db.run(session_rows.campaign_settings_op(campaign_id))
    threshold = float(campaign["review_threshold"])
    existing = services.db.run(
        knowledge_rows.campaign_entities_op(campaign_id, exclude_session=session_id)
    )
    entries = SessionStore(services.db).get_entries(session_id)
    llm = services.llm
    embedder = MemoizingEmbedder(services.embedder)
    t0 = time.perf_counter()
    if llm is not None:
        result = extraction.extract_knowledge_llm(
            entries,
            existing,
            llm,
            campaign_id=campaign_id,
            session_id=session_id,
            review_threshold=threshold,
            embedder=embedder,
        )
    else:
        result = extraction.extract_knowledge(
            entries,
            existing,
            campaign_id=campaign_id,
            session_id=session_id,
            review_threshold=threshold,
            embedder=embedder,
        )
    facts = [
        replace(f, provenance="extracted", session_id=session_id, dm_confirmed=False)
        for f in result.relationships
    ]
    t1 = time.perf_counter()
    written = services.db.run(
        _write_knowledge_op(campaign_id, session_id, list(result.entities), facts,
                            result.new_aliases)
    )
    t2 = time.perf_counter()
    from glyphoxa_pipelines.pipeline.text_products import refresh_chunk_entities

    written["chunks_retagged"] = refresh_chunk_entities(services, campaign_id, session_id)
    written["extract_s"] = round(t1 - t0, 3)
    written["write_s"] = round(t2 - t1, 3)
    written["retag_s"] = round(time.perf_counter() - t2, 3)
    resolved = Counter(r.method for r in result.resolutions if r.existing)
    top = sorted(result.mention_counts.items(), key=lambda kv: (-kv[1], kv[0]))[:15]
    out = StepOutcome("extracted_knowledge")
    out.metadata = {
        "method": result.method,
        "extractor_version": result.extractor_version,
        "review_threshold": threshold,
        "entities_new": len(result.entities),
        "entities_resolved_to_existing": sum(resolved.values()),
        "resolution_methods": dict(resolved),
        "facts": len(facts),
        "facts_canon": sum(1 for f in facts if f.status == "canon"),
        "facts_pending_review": sum(1 for f in facts if f.status == "pending"),
        "facts_inferred": sum(1 for f in facts if f.assertion == "inferred"),
        "top_entities": dict(top),
        "spellings_resolved_to_existing": {
            entity_id: sorted(aliases) for entity_id, aliases in sorted(result.new_aliases.items())
        },
        **written,
    }
    dangling = services.db.run(knowledge_rows.dangling_facts_op(campaign_id, session_id))
    out.checks.append(
        CheckOutcome(
            "facts_reference_existing_entities",
            int(dangling["dangling"]) == 0,
            f"{dangling['dangling']} of {dangling['facts']} facts reference a missing entity",
            metadata={"dangling": int(dangling["dangling"])},
        )
    )
    return out
