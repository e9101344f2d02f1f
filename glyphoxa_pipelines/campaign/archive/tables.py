"""Everything a campaign is, table by table, in the order rows can be written back.

Each table is read with `campaign_id = <the campaign>` (the campaign row by its id), so the
list is the archive's whole scope; `tests/campaign/test_archive.py` fails when a migration
adds a campaign-scoped table this list does not name. Two tables number their rows from a
home-wide sequence (`session_entries`, `relationships`); `restore` keeps those numbers when
they are free in the target home and renumbers them, with every reference, when not.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TableSpec:
    name: str
    order_by: str  # a stable order, so the same campaign exports the same bytes
    identity: str | None = None  # a column numbered by a sequence shared by all campaigns


CAMPAIGN_TABLES: tuple[TableSpec, ...] = (
    TableSpec("campaigns", "id"),
    TableSpec("sessions", "id"),
    TableSpec("session_entries", "id", identity="id"),
    TableSpec("chunks", "id"),
    TableSpec("chunk_embeddings", "chunk_id, model"),
    TableSpec("entry_embeddings", "entry_id, model"),
    TableSpec("entities", "id"),
    TableSpec("npc_profiles", "entity_id"),
    TableSpec("relationships", "id", identity="id"),
    TableSpec("session_summaries", "session_id"),
    TableSpec("recaps", "session_id"),
    TableSpec("campaign_summaries", "campaign_id"),
    TableSpec("import_batches", "id"),
    TableSpec("spelling_suggestions", "entity_id, spelling, session_id"),
    TableSpec("spelling_dismissals", "entity_id, spelling_key"),
)
TABLE_NAMES = frozenset(t.name for t in CAMPAIGN_TABLES)
# Campaign-scoped tables an archive leaves out on purpose: what lives one turn and is rebuilt
# on demand is state of the running service, not of the campaign; the chunks' lexeme counts
# are rebuilt by the `chunks` triggers as the archive's chunks are restored.
NOT_ARCHIVED = frozenset({"realtime_prefetch", "chunk_lexeme_counts"})

# Row columns that hold an entry id or a fact id (renumbered together with the ids).
ENTRY_REFS: dict[str, tuple[str, ...]] = {
    "session_entries": ("id",),
    "entry_embeddings": ("entry_id",),
    "chunks": ("first_entry_id", "last_entry_id"),
}
FACT_REFS: dict[str, tuple[str, ...]] = {"relationships": ("id", "invalidated_by")}
