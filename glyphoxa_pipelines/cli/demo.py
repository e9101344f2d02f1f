"""`glyphoxa demo`: the whole memory system on the embedded database in well under a minute.

Loads the sample campaign, imports two sample sessions (raw speech-to-text, names misheard),
runs the session chain and campaign consolidation in-process, then shows what the NPCs
remember: identity, recent transcript, searches, summary, recap, extracted facts — and that a
secret stays with the NPCs who know it.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import typer
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from glyphoxa_pipelines.cli.errors import user_errors

console = Console()
SESSION_STARTS = (
    datetime(2026, 11, 7, 19, 0, tzinfo=UTC),
    datetime(2026, 11, 14, 19, 0, tzinfo=UTC),
)


def demo(
    npc: str = typer.Option("eldrinax", help="The NPC whose memory to show."),
    question: str = typer.Option(
        "Who forged the hammer and what did Brannoc promise?",
        help="A question for the nearest-neighbour search.",
    ),
) -> None:
    """Load the sample campaign and sessions, run the pipeline, print an NPC's memory."""
    from glyphoxa_pipelines.campaign.campaign_file import CampaignFileError, parse_campaign_file
    from glyphoxa_pipelines.campaign.campaign_loader import CampaignLoader
    from glyphoxa_pipelines.campaign.session_import import import_session
    from glyphoxa_pipelines.campaign.transcript_import import TranscriptFormatError
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.demo import SAMPLE_CAMPAIGN, SAMPLE_SESSIONS_DIR

    started = time.perf_counter()
    settings = Settings.from_env()
    with user_errors(CampaignFileError, TranscriptFormatError), open_database(settings) as db:
        where = settings.database_url and "GLYPHOXA_DATABASE_URL" or f"embedded, {settings.pgdata}"
        console.rule("[bold]Glyphoxa memory demo")
        console.print(f"database: PostgreSQL + pgvector ({where}), migrated")

        report = CampaignLoader(db).load(parse_campaign_file(SAMPLE_CAMPAIGN))
        cid = report.campaign_id
        console.print(
            f"campaign [bold]{cid}[/]: {report.entities} entities, {report.relationships} "
            f"relationships, {report.npcs} NPC profiles (loaded in one transaction, idempotent)"
        )
        session_ids = []
        for path, start in zip(
            sorted(SAMPLE_SESSIONS_DIR.glob("*.jsonl")), SESSION_STARTS, strict=False
        ):
            imported = import_session(db, cid, path, start_at=start)
            session_ids.append(imported.session.id)
            console.print(
                f"session [bold]{imported.session.id}[/]: {len(imported.transcript.entries)} "
                f"utterances in L1 ({imported.written} new), raw speech-to-text"
            )
        _run_pipeline(db, settings, cid, session_ids)
        _show_memory(db, settings, cid, session_ids, npc, question)
    console.rule(f"done in {time.perf_counter() - started:.1f} s")


def _run_pipeline(db, settings, cid: str, session_ids: list[str]) -> None:  # type: ignore[no-untyped-def]
    from glyphoxa_pipelines.pipeline.runner import run_campaign_chain

    table = Table(title="Pipeline (the Dagster assets' code, run in-process)", show_lines=False)
    table.add_column("key")
    table.add_column("asset")
    table.add_column("s", justify="right")
    table.add_column("metadata")
    results = run_campaign_chain(db, cid, settings=settings, session_ids=session_ids)
    for key, outcomes in results.items():
        for asset, outcome in outcomes.items():
            meta = {k: v for k, v in outcome.metadata.items() if not isinstance(v, (list, dict))}
            shown = ", ".join(f"{k}={v}" for k, v in list(meta.items())[:4])
            failed = outcome.failed_checks
            if failed:
                shown += " [red]checks failed: " + ", ".join(c.name for c in failed)
            table.add_row(key.split("--")[-1], asset, f"{outcome.seconds:.2f}", shown)
    console.print(table)


def _show_memory(db, settings, cid: str, session_ids: list[str], npc: str, question: str) -> None:  # type: ignore[no-untyped-def]
    from glyphoxa_pipelines.memory import (
        KnowledgeGraph,
        RecapStore,
        SemanticIndex,
        SessionStore,
        SummaryStore,
    )
    from glyphoxa_pipelines.pipeline.services import embedder_from_settings

    graph, log, index = KnowledgeGraph(db), SessionStore(db), SemanticIndex(db)
    npc_entity = graph.resolve(cid, npc)
    if npc_entity is None:
        raise typer.BadParameter(f"no NPC {npc!r} in {cid}")
    snap = graph.identity_snapshot(cid, npc_entity.id)
    lines = [f"[bold]{snap.entity.name}[/] ({snap.entity.type}) {snap.entity.attributes}"]
    if snap.profile:
        lines += [
            f"personality: {snap.profile.personality}",
            f"speaking style: {snap.profile.speaking_style}",
            f"emotional state: {snap.profile.emotional_state}",
            *(f"rule: {r}" for r in snap.profile.behavior_rules),
        ]
    lines += [f"knows: {f.sentence()}" for f in snap.facts]
    console.print(Panel("\n".join(lines), title=f"L3 identity snapshot of {snap.entity.name}"))

    first = session_ids[0]
    recent = log.get_recent(first, timedelta(minutes=5))
    text = "\n".join(
        f"[dim]{e.spoken_at:%H:%M:%S}[/] [bold]{e.speaker_name}[/]: {e.text}"
        + (f"  [yellow](heard: {e.raw_text})[/]" if e.raw_text != e.text else "")
        for e in recent
    )
    console.print(
        Panel(
            text or "(empty)", title=f"L1 recent transcript, last 5 min of {first} (raw STT kept)"
        )
    )

    hits = log.search(cid, "crown shard", limit=3)
    console.print(
        Panel(
            "\n".join(f"[{h.rank:.2f}] {h.speaker_name}: {h.text}" for h in hits) or "(none)",
            title="L1 full-text search: 'crown shard'",
        )
    )

    embedder = embedder_from_settings(settings)
    query = embedder.embed([question])[0]
    near = index.search(cid, query, 3)
    console.print(
        Panel(
            "\n\n".join(f"[{h.score:.3f}] {h.chunk.text[:400]}" for h in near) or "(none)",
            title=f"L2 nearest chunks (cosine, {embedder.model_id}): {question!r}",
        )
    )

    summary = SummaryStore(db).get(session_ids[0])
    if summary:
        console.print(
            Panel(summary.summary, title=f"Summary of {session_ids[0]} ({summary.method})")
        )
    recap = RecapStore(db).get(session_ids[0])
    if recap:
        console.print(Panel(recap.text, title="Recap for the next session"))

    extracted = graph.find_entities(cid, limit=1000)
    facts: list[str] = []
    for ent in extracted:
        for rel in graph.get_relationships(cid, ent.id, include_pending=True):
            if rel.provenance == "extracted" and rel.rel_type != "appears_in":
                target = graph.get_entity(cid, rel.target_id)
                status = "" if rel.status == "canon" else f" [yellow]({rel.status})[/]"
                facts.append(
                    f"{ent.name} {rel.rel_type.replace('_', ' ')} "
                    f"{target.name if target else rel.target_id} "
                    f"[dim]conf {rel.confidence:.2f}, {rel.assertion}[/]{status}"
                )
    console.print(Panel("\n".join(facts[:15]) or "(none)", title="Facts extracted by the pipeline"))

    for who in ("vexmira", "captain-orlen-hask"):
        seen = graph.identity_snapshot(cid, who)
        secret = [f.sentence() for f in seen.facts if f.secret] or "none (hidden from this NPC)"
        console.print(f"secrets {seen.entity.name} knows: {secret}")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
