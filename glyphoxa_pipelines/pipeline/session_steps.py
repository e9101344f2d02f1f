"""The per-session chain as plain functions: one function per Dagster asset.

Why plain functions: the Dagster assets (defs/session_assets.py), `glyphoxa process`, the demo
and the bench all run exactly this code; Dagster adds partitions, lineage and scheduling on top.
Each step reads its inputs from PostgreSQL, writes its rows in one transaction that replaces
what an earlier run of the same step wrote for that session, and returns metadata plus the
outcomes of its checks.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import (
    CampaignStore,
    SemanticIndex,
    SessionStore,
)
from glyphoxa_pipelines.memory.models import Entity, Entry, Relationship
from glyphoxa_pipelines.memory.pipeline_rows import (
    chunk_rows,
    knowledge_rows,
    session_rows,
    summary_rows,
)
from glyphoxa_pipelines.pipeline import versions
from glyphoxa_pipelines.pipeline.knowledge_step import extracted_knowledge
from glyphoxa_pipelines.pipeline.late_turns import LatePass, embed_chunks_and_their_turns
from glyphoxa_pipelines.pipeline.outcomes import CheckOutcome, StepOutcome
from glyphoxa_pipelines.pipeline.services import MemoizingEmbedder, PipelineServices

# Texts per embed call in chunk_embeddings: large enough that the encoder finds many texts of
# one length to run together (C1E001's 2,160 turns take 115 distinct lengths), small enough
# that a session's rows are written as they are made.
EMBED_BATCH = 1024


def _session(services: PipelineServices, session_id: str) -> dict[str, Any]:
    return services.db.run(session_rows.session_info_op(session_id))


def _entities(services: PipelineServices, campaign_id: str) -> list[Entity]:
    return services.db.run(knowledge_rows.campaign_entities_op(campaign_id))


# ----------------------------------------------------------------------------- 1. raw


def raw_transcript(services: PipelineServices, session_id: str) -> StepOutcome:
    """Observe the session's L1 entries as recorded (nothing is changed)."""
    info = _session(services, session_id)
    out = StepOutcome("raw_transcript")
    out.metadata = {
        "campaign_id": info["campaign_id"],
        "status": info["status"],
        "entries": int(info["entries"]),
        "speakers": int(info["speakers"]),
        "words": int(info["words"]),
        "duration_s": round(float(info["duration_s"] or 0.0), 1),
        "content_version": f"{info['entries']}-{info['max_entry_id']}",
    }
    out.checks.append(
        CheckOutcome(
            "raw_transcript_not_empty",
            int(info["entries"]) > 0,
            f"{info['entries']} entries recorded",
            severity="error" if info["status"] == "ended" else "warn",
        )
    )
    return out


# ----------------------------------------------------------------------------- 2. corrected


def _correction_dicts(result: Any, version: str) -> list[dict[str, Any]]:
    return [dict(c.as_dict(), stage="pipeline", version=version) for c in result.corrections]


def corrected_transcript(services: PipelineServices, session_id: str) -> StepOutcome:
    """Re-correct every entry from its immutable raw text against the campaign's current
    names (stage 1 and the context stage, in the scene of the session's turns before it, the
    speaker's own name and the party's; + stage 2 with an LLM); store only entries whose text
    changed."""
    from glyphoxa_pipelines.correction import build_index, correct
    from glyphoxa_pipelines.correction.scene import SceneMemory, names_said, speaker_names
    from glyphoxa_pipelines.memory.correction_targets import correction_entities_op

    info = _session(services, session_id)
    campaign_id = info["campaign_id"]
    campaign_entities = _entities(services, campaign_id)
    # Only names the target rule admits are corrected towards; speakers and the party are
    # every entity of theirs (a name is said as it is, whatever the corrector may target).
    index = build_index(services.db.run(correction_entities_op(campaign_id)))
    npc_names = {e.id: e.name for e in campaign_entities}
    party = [e.name for e in campaign_entities if e.type == "player"]
    entries: list[Entry] = SessionStore(services.db).get_entries(session_id)
    llm = services.corrector_llm
    version = versions.corrector_version(llm is not None)

    # The scene is built in spoken order from what the corrector settled turn after turn, so
    # this pass is sequential; with an LLM, stage 2 then runs in parallel in those scenes.
    memory = SceneMemory()
    scenes: list[tuple[str, ...]] = []
    results: list[tuple[Entry, Any]] = []
    for entry in entries:
        npc = npc_names.get(entry.npc_id) if entry.npc_id else None
        scene = memory.names(
            *speaker_names(index, entry.speaker_name, npc), *party, speaker=entry.speaker_id
        )
        result = correct(entry.raw_text, index, entry.word_confidences, scene=scene)
        memory.remember(names_said(result, index), speaker=entry.speaker_id)
        scenes.append(scene)
        results.append((entry, result))

    if llm is not None:

        def fix(k: int) -> tuple[Entry, Any]:
            entry = entries[k]
            return entry, correct(
                entry.raw_text, index, entry.word_confidences, scene=scenes[k], llm=llm
            )

        with ThreadPoolExecutor(max_workers=4) as pool:  # bounded: the LLM client limits too
            results = list(pool.map(fix, range(len(entries))))

    updates: list[tuple[int, str, list[dict[str, Any]], str]] = []
    by_method: Counter[str] = Counter()
    names: Counter[str] = Counter()
    for entry, result in results:
        corrections = _correction_dicts(result, version)
        for c in result.corrections:
            by_method[c.method] += 1
            names[c.entity or c.replacement] += 1
        if (entry.text, entry.corrections, entry.corrector_version) != (
            result.text,
            corrections,
            version,
        ):
            updates.append((entry.id, result.text, corrections, version))
    if updates:
        SessionStore(services.db).update_corrections(updates)
    out = StepOutcome("corrected_transcript")
    out.metadata = {
        "entries": len(entries),
        "entries_updated": len(updates),
        "entries_with_corrections": sum(1 for _, r in results if r.corrections),
        "corrections": sum(by_method.values()),
        "corrections_by_method": dict(by_method),
        "top_corrected_names": dict(names.most_common(10)),
        "known_names": len(index),
        "corrector_version": version,
    }
    cov = services.db.run(chunk_rows.correction_coverage_op(session_id, version))
    out.checks.append(
        CheckOutcome(
            "every_entry_corrected",
            int(cov["uncorrected"]) == 0,
            f"{cov['uncorrected']} of {cov['entries']} entries not corrected by {version}",
            metadata={"uncorrected": int(cov["uncorrected"])},
        )
    )
    return out


# ----------------------------------------------------------------------------- 3. chunks


def transcript_chunks(services: PipelineServices, session_id: str) -> StepOutcome:
    """Windows of turns sized to the embedding model's input limit, replacing the session's
    chunk set in one transaction (embeddings of unchanged chunks survive)."""
    from glyphoxa_pipelines.processing.chunking import chunk_transcript
    from glyphoxa_pipelines.processing.mentions import MentionFinder

    info = _session(services, session_id)
    embedder = services.embedder
    entries = SessionStore(services.db).get_entries(session_id)
    finder = MentionFinder.from_entities(_entities(services, info["campaign_id"]))
    t0 = time.perf_counter()
    chunks = chunk_transcript(
        entries,
        count_tokens=embedder.count_tokens,
        max_tokens=embedder.max_tokens,
        known_names=finder,
        campaign_id=info["campaign_id"],
        session_id=session_id,
    )
    t1 = time.perf_counter()
    SemanticIndex(services.db).replace_session_chunks(session_id, chunks)
    t2 = time.perf_counter()
    tokens = [c.token_count for c in chunks]
    mentioned = {e for c in chunks for e in c.entity_ids}
    out = StepOutcome("transcript_chunks")
    out.metadata = {
        "chunks": len(chunks),
        "entries": len(entries),
        "mean_tokens": round(sum(tokens) / len(tokens), 1) if tokens else 0,
        "max_tokens": max(tokens, default=0),
        "model_input_limit": embedder.max_tokens,
        "entities_mentioned": len(mentioned),
        "chunker_version": versions.CHUNKER_VERSION,
        "chunking_s": round(t1 - t0, 3),
        "write_s": round(t2 - t1, 3),
    }
    out.checks += chunk_checks(services, session_id, embedder.max_tokens)
    out.metadata["checks_s"] = round(time.perf_counter() - t2, 3)
    return out


def chunk_checks(
    services: PipelineServices, session_id: str, max_tokens: int
) -> list[CheckOutcome]:
    cov = services.db.run(chunk_rows.chunk_coverage_op(session_id))
    emb = services.db.run(chunk_rows.embedding_coverage_op(session_id, "", max_tokens))
    return [
        CheckOutcome(
            "chunks_cover_every_entry",
            int(cov["uncovered"]) == 0,
            f"{cov['uncovered']} of {cov['entries']} entries in no chunk",
            metadata={"uncovered": int(cov["uncovered"])},
        ),
        CheckOutcome(
            "no_chunk_over_model_limit",
            int(emb["over_limit"]) == 0,
            f"{emb['over_limit']} chunks over {max_tokens} word pieces "
            f"(longest {emb['max_tokens']})",
            metadata={"over_limit": int(emb["over_limit"]), "longest": int(emb["max_tokens"])},
        ),
    ]


# ----------------------------------------------------------------------------- 4. embeddings


def chunk_embeddings(
    services: PipelineServices,
    session_id: str,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> StepOutcome:
    """Embed the session's chunks, then its turns ('<speaker>: <text>', what session search
    ranks a retrieved window's turns by), that have no embedding for the configured model
    (batched, stored beside other models' embeddings). `progress(done, total)` counts chunks
    and turns together. When every chunk of the campaign has this model, the campaign's active
    model is switched to it atomically.

    With a late-chunking model (`late_turns`), a turn whole in a chunk gets its vector from
    that chunk's pass (`late_turns.py`); only the other turns get a pass of their own.

    Each distinct text is embedded once per run: a turn long enough to be a chunk by itself,
    a chunk repeated (a replayed intro) and the short turns said again and again ("MATT:
    Okay.") would otherwise each go through the model again for the same vector."""
    info = _session(services, session_id)
    embedder = MemoizingEmbedder(services.embedder)
    model = embedder.model_id
    index = SemanticIndex(services.db)
    index.register_model(model, embedder.dimension)
    missing = index.chunks_missing_embeddings(model, session_id=session_id)
    turns = index.entries_missing_embeddings(model, session_id=session_id)
    total = len(missing) + len(turns)
    started = time.perf_counter()
    done = 0
    late: LatePass | None = None
    if getattr(services.embedder, "late_turns", False):
        # late chunking: turns whole in a chunk are read off its pass (late_turns.py)
        rows_so_far = 0

        def advance(rows: int) -> None:
            nonlocal rows_so_far
            rows_so_far += rows
            if progress:
                progress(rows_so_far, total)

        late = embed_chunks_and_their_turns(
            index, services.embedder, model,
            chunks=index.get_chunks(session_id),
            entries=SessionStore(services.db).get_entries(session_id),
            missing_chunks=missing, missing_turns=turns, batch=EMBED_BATCH, progress=advance,
        )
        done, turns = late.chunks_written, late.alone
    else:
        for start in range(0, len(missing), EMBED_BATCH):
            batch = missing[start : start + EMBED_BATCH]
            vectors = embedder.embed([c.text for c in batch])
            index.add_embeddings(model, [(c.id, v) for c, v in zip(batch, vectors, strict=True)])
            done += len(batch)
            if progress:
                progress(done, total)
    embed_s = time.perf_counter() - started
    turns_done = late.turns_written if late else 0
    for start in range(0, len(turns), EMBED_BATCH):
        batch = turns[start : start + EMBED_BATCH]
        vectors = embedder.embed([t.embedding_text() for t in batch])
        index.add_entry_embeddings(
            model,
            [(t.entry_id, v) for t, v in zip(batch, vectors, strict=True)],
            texts=[t.text for t in batch],
        )
        turns_done += len(batch)
        if progress:
            progress(done + turns_done, total)
    turns_s = time.perf_counter() - started - embed_s
    switched = _maybe_switch_active_model(services, info["campaign_id"], model)
    campaign = CampaignStore(services.db).require(info["campaign_id"])
    out = StepOutcome("chunk_embeddings")
    out.metadata = {
        "model": model,
        "dimension": embedder.dimension,
        "embedded": done,
        "embed_seconds": round(embed_s, 3),
        "chunks_per_second": round(done / embed_s, 1) if done and embed_s > 0 else None,
        "turns_embedded": turns_done,
        "turns_embed_seconds": round(turns_s, 3),
        "distinct_texts_embedded": embedder.distinct_texts + (late.texts_run if late else 0),
        # turns whose vector was read off their chunk's pass (late chunking), not a pass alone
        "turns_from_chunks": late.turns_written if late else 0,
        "turns_per_second": round(turns_done / turns_s, 1) if turns_done and turns_s > 0 else None,
        "active_model": campaign.active_embedding_model,
        "switched_active_model": switched,
    }
    out.checks += embedding_checks(
        services, session_id, services.embedder, campaign.active_embedding_model
    )
    return out


def embedding_checks(
    services: PipelineServices, session_id: str, embedder: Any, active_model: str
) -> list[CheckOutcome]:
    cov = services.db.run(
        chunk_rows.embedding_coverage_op(session_id, embedder.model_id, embedder.max_tokens)
    )
    active = (
        cov
        if active_model == embedder.model_id
        else services.db.run(chunk_rows.embedding_coverage_op(session_id, active_model, 10**9))
    )
    turns = services.db.run(chunk_rows.turn_embedding_coverage_op(session_id, embedder.model_id))
    return [
        CheckOutcome(
            "every_chunk_embedded",
            int(cov["missing"]) == 0,
            f"{cov['missing']} of {cov['chunks']} chunks lack a {embedder.model_id} embedding",
            metadata={"missing": int(cov["missing"]), "model": embedder.model_id},
        ),
        CheckOutcome(
            "every_turn_embedded",
            int(turns["missing"]) == 0,
            f"{turns['missing']} of {turns['entries']} turns lack a {embedder.model_id} embedding",
            metadata={"missing": int(turns["missing"]), "model": embedder.model_id},
        ),
        CheckOutcome(
            "every_chunk_embedded_for_active_model",
            int(active["missing"]) == 0,
            f"{active['missing']} of {active['chunks']} chunks lack an embedding of the "
            f"campaign's active model {active_model}",
            severity="warn",
            metadata={"missing": int(active["missing"]), "model": active_model},
        ),
    ]


def _maybe_switch_active_model(services: PipelineServices, campaign_id: str, model: str) -> bool:
    store = CampaignStore(services.db)
    if store.require(campaign_id).active_embedding_model == model:
        return False
    missing = SemanticIndex(services.db).chunks_missing_embeddings(model, campaign_id=campaign_id)
    if missing:
        return False
    store.set_active_embedding_model(campaign_id, model)
    return True


# ----------------------------------------------------------------------------- 5. knowledge
# `extracted_knowledge` lives in knowledge_step.py: how facts enter the graph is its own rule set.

# ----------------------------------------------------------------------------- 6. summary


def episode_entity_id(session_id: str) -> str:
    from glyphoxa_pipelines.memory.ids import slugify

    return "episode-" + slugify(session_id)


def _write_summary_op(
    summary: Any, episode: Entity, links: list[Relationship], session_id: str
) -> Op:
    from glyphoxa_pipelines.memory.recaps import save_summary_op

    saved = yield from save_summary_op(summary)
    yield from knowledge_rows.upsert_session_entity_op(episode, session_id)
    removed = yield from summary_rows.clear_episode_op(episode.campaign_id, episode.id)
    linked = 0
    for link in links:
        new_id = yield from knowledge_rows.insert_fact_op(link)
        linked += int(new_id is not None)
    return {"links_removed": removed, "participants_linked": linked, "saved": saved}


def session_summary(services: PipelineServices, session_id: str) -> StepOutcome:
    """What happened (decisions, reveals, promises, outcomes), stored, plus an episode entity
    linked to the entities that took part."""
    from glyphoxa_pipelines.pipeline import text_products

    info = _session(services, session_id)
    campaign_id = info["campaign_id"]
    summary, details = text_products.summarize_session(services, campaign_id, session_id)
    episode = Entity(
        campaign_id=campaign_id,
        id=episode_entity_id(session_id),
        type="episode",
        name=info["title"] or f"Session {session_id}",
        attributes={
            "session_id": session_id,
            "started_at": info["started_at"].isoformat() if info["started_at"] else None,
            "summary": summary.summary[:1000],
        },
        provenance="extracted",
        session_id=session_id,
        extractor_version=summary.method,
    )
    participants = text_products.participants(services, session_id)
    links = [
        Relationship(
            campaign_id=campaign_id,
            source_id=entity_id,
            target_id=episode.id,
            rel_type="appears_in",
            attributes={"mentions": count},
            confidence=1.0,
            assertion="stated",
            provenance="extracted",
            status="canon",
            session_id=session_id,
            observed_at=info["started_at"],
            valid_from=info["started_at"],
            evidence=f"mentioned in {count} chunks",
            extractor_version=summary.method,
        )
        for entity_id, count in participants
    ]
    written = services.db.run(_write_summary_op(summary, episode, links, session_id))
    out = StepOutcome("session_summary")
    out.metadata = {
        "method": summary.method,
        "summary_words": len(summary.summary.split()),
        "key_points": len(summary.key_points),
        "episode_entity": episode.id,
        "participants_linked": written["participants_linked"],
        "preview": summary.summary[:300],
        **details,
    }
    out.checks.append(
        CheckOutcome(
            "summary_not_empty",
            bool(summary.summary.strip()),
            f"{len(summary.summary.split())} words",
        )
    )
    return out


# ----------------------------------------------------------------------------- 7. recap


def _recap_audio(services: PipelineServices, session_id: str, text: str) -> dict[str, Any]:
    """Speak the recap to `<home>/recaps/<session>.<format>` when a speech model is configured.

    A failure is reported, not raised: the text recap is what the next session needs, and a
    retry of the whole step would redo the LLM recap for nothing (retries live in the provider).
    """
    from glyphoxa_pipelines.providers.speech import SpeechError

    speech = services.speech
    if speech is None or not text.strip():
        return {}
    path = services.settings.home / "recaps" / f"{session_id}.{speech.response_format}"
    try:
        size = speech.synthesize_to(text, path)
    except (SpeechError, OSError) as exc:
        return {"audio_model": speech.model, "audio_error": str(exc)[:500]}
    return {"audio_model": speech.model, "audio_path": str(path), "audio_bytes": size}


def session_recap(services: PipelineServices, session_id: str) -> StepOutcome:
    """A dramatic "Previously on..." for the start of the next session, saved as the recap,
    and spoken to an audio file when a speech endpoint is configured."""
    from glyphoxa_pipelines.memory import RecapStore
    from glyphoxa_pipelines.pipeline import text_products

    info = _session(services, session_id)
    recap, details = text_products.recap_session(services, info["campaign_id"], session_id)
    store = RecapStore(services.db)
    store.save(recap)  # the text first: a slow or failing speech endpoint cannot lose it
    audio = _recap_audio(services, session_id, recap.text)
    if audio.get("audio_path"):
        recap = store.save(replace(recap, audio_path=audio["audio_path"]))
    out = StepOutcome("session_recap")
    out.metadata = {
        "method": recap.method,
        "recap_words": len(recap.text.split()),
        "audio_path": recap.audio_path,
        "preview": recap.text[:300],
        **audio,
        **details,
    }
    out.checks.append(
        CheckOutcome("recap_not_empty", bool(recap.text.strip()), f"{len(recap.text)} chars")
    )
    return out


SESSION_STEPS: dict[str, Callable[..., StepOutcome]] = {
    "raw_transcript": raw_transcript,
    "corrected_transcript": corrected_transcript,
    "transcript_chunks": transcript_chunks,
    "chunk_embeddings": chunk_embeddings,
    "extracted_knowledge": extracted_knowledge,
    "session_summary": session_summary,
    "session_recap": session_recap,
}
SESSION_ASSETS: tuple[str, ...] = tuple(SESSION_STEPS)
