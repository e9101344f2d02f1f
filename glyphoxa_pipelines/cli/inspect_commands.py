"""`glyphoxa inspect ...`: the operator's look into one campaign's memory, the commands that
stand for the design's "Inspecting memory state" SQL (docs/DESIGN.md, "Inspecting memory",
lists which is which). Every command is scoped by `--campaign` and prints tab-separated
lines, so its output can be read, grepped and compared."""

from __future__ import annotations

from typing import Any

import typer

from glyphoxa_pipelines.cli.errors import user_errors

inspect_app = typer.Typer(help="Look into a campaign's memory (read-only).", no_args_is_help=True)

CampaignOpt = typer.Option(..., "--campaign", "-c", help="Campaign id.")


def _row(*values: Any) -> None:
    """One tab-separated line; tabs and newlines inside values become spaces."""
    print("\t".join(" ".join(str(v).split()) if v is not None else "" for v in values))


def _read(op: Any) -> Any:
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import open_database

    with open_database(Settings.from_env()) as db:
        return db.run(op, transaction=False)


@inspect_app.command("sessions")
def sessions(campaign: str = CampaignOpt) -> None:
    """Entries per session (timeline order): session, start, status, entries, corrected,
    chunks, title."""
    from glyphoxa_pipelines.memory.inspection import entries_per_session_op

    with user_errors():
        rows = _read(entries_per_session_op(campaign))
    for r in rows:
        _row(r["session_id"], f"{r['started_at']:%Y-%m-%d %H:%M}", r["status"], r["entries"],
             r["corrected"], r["chunks"], r["title"])


@inspect_app.command("corrections")
def corrections(
    campaign: str = CampaignOpt,
    session: str | None = typer.Option(None, "--session", "-s", help="Only this session."),
    limit: int = typer.Option(50, min=1, max=10_000),
) -> None:
    """Raw vs corrected: entry id, session, speaker, heard, corrected."""
    from glyphoxa_pipelines.memory.inspection import raw_vs_corrected_op

    with user_errors():
        rows = _read(raw_vs_corrected_op(campaign, session, limit))
    for r in rows:
        _row(r["id"], r["session_id"], r["speaker_name"], r["raw_text"], r["text"])


@inspect_app.command("embeddings")
def embeddings(campaign: str = CampaignOpt) -> None:
    """Embedding coverage per model: model, chunks embedded/total, entries embedded/total."""
    from glyphoxa_pipelines.memory.inspection import embedding_coverage_op

    with user_errors():
        rows = _read(embedding_coverage_op(campaign))
    for r in rows:
        _row(r["model"], f"{r['chunks_embedded']}/{r['chunks']}",
             f"{r['entries_embedded']}/{r['entries']}")


@inspect_app.command("nearest")
def nearest(
    text: str = typer.Argument(..., help="Text to embed and look up."),
    campaign: str = CampaignOpt,
    top: int = typer.Option(5, min=1, max=100),
) -> None:
    """Nearest chunks to a text under the campaign's active embedding model (the one its
    search reads, which after a model switch need not be the configured one): distance,
    session, chunk, text."""
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory import CampaignStore, SemanticIndex
    from glyphoxa_pipelines.pipeline.services import embedder_from_settings
    from glyphoxa_pipelines.providers.embeddings import get_embedder

    settings = Settings.from_env()
    with user_errors(), open_database(settings) as db:
        active = CampaignStore(db).require(campaign).active_embedding_model
        embedder = embedder_from_settings(settings)
        if embedder.model_id != active:
            embedder = get_embedder("local", model=active)
        vector = embedder.embed([text])[0]
        hits = SemanticIndex(db).search(campaign, vector, top, model=active)
    for h in hits:
        _row(f"{h.score:.4f}", h.chunk.session_id, h.chunk.id, h.chunk.text[:200])


@inspect_app.command("entities")
def entities(campaign: str = CampaignOpt) -> None:
    """Entities by type: type, count, extracted by the pipeline."""
    from glyphoxa_pipelines.memory.inspection import entities_by_type_op

    with user_errors():
        rows = _read(entities_by_type_op(campaign))
    for r in rows:
        _row(r["type"], r["entities"], r["extracted"])


def _fact(f: Any) -> None:
    rel = f.relationship
    _row(rel.id, f.source_name, rel.rel_type, f.target_name, f"{rel.confidence:.2f}",
         rel.status, rel.visibility + (f" known_by={','.join(rel.known_by)}" if rel.known_by
                                       else ""))


@inspect_app.command("relationships")
def relationships(
    npc: str = typer.Argument(..., help="Entity id."),
    campaign: str = CampaignOpt,
) -> None:
    """An NPC's current relationships, both directions, as the DM sees them (secret and
    hidden included): fact id, source, relation, target, confidence, status, visibility."""
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory import KnowledgeGraph

    with user_errors(), open_database(Settings.from_env()) as db:
        graph = KnowledgeGraph(db)
        sub = graph.neighbors(campaign, npc, depth=1, include_facts=True, npc_id=None)
    for f in sorted(sub.facts, key=lambda f: (f.relationship.rel_type, f.relationship.id or 0)):
        if npc in (f.relationship.source_id, f.relationship.target_id):
            _fact(f)


@inspect_app.command("review")
def review(campaign: str = CampaignOpt, limit: int = typer.Option(100, min=1, max=10_000)) -> None:
    """The review queue (pending facts, most confident first)."""
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory import KnowledgeGraph

    with user_errors(), open_database(Settings.from_env()) as db:
        queue = KnowledgeGraph(db).review_queue(campaign, limit=limit)
    for f in queue:
        _fact(f)


@inspect_app.command("spellings")
def spellings(campaign: str = CampaignOpt,
              limit: int = typer.Option(100, min=1, max=10_000)) -> None:
    """Spellings of known entities the pipeline heard, waiting for the DM to accept them as
    aliases or dismiss them: entity id, entity name, spelling, sessions (comma-separated)."""
    from glyphoxa_pipelines.memory.spelling_suggestions import open_spellings_op

    with user_errors():
        rows = _read(open_spellings_op(campaign, limit=limit))
    for r in rows:
        _row(r["entity_id"], r["entity_name"], r["spelling"], ",".join(r["sessions"]))


@inspect_app.command("walk")
def walk(
    entity: str = typer.Argument(..., help="Entity id to start from."),
    campaign: str = CampaignOpt,
    depth: int = typer.Option(2, min=1, max=4, help="Hops."),
    npc: str | None = typer.Option(None, help="Walk as this NPC sees the graph."),
) -> None:
    """A multi-hop walk inside the campaign: the entities reached (id, type, name), then the
    facts between them."""
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory import KnowledgeGraph
    from glyphoxa_pipelines.memory.visibility import viewer

    with user_errors(), open_database(Settings.from_env()) as db:
        sub = KnowledgeGraph(db).neighbors(
            campaign, entity, depth=depth, include_facts=True,
            npc_id=viewer(npc) if npc is not None else None,
        )
    for e in sub.entities:
        _row("entity", e.id, e.type, e.name)
    for f in sub.facts:
        _fact(f)


def register(app: typer.Typer) -> None:
    app.add_typer(inspect_app, name="inspect")
