"""Read every row of a campaign (see `tables`) as JSON objects, in one snapshot.

Rows are read with `to_jsonb`, which writes each column in its own text form (a vector as
`[0.1,...]`, a timestamp with its offset), so `jsonb_populate_recordset` reads them back
exactly; generated columns (full-text vectors) are left out and rebuilt on restore.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from psycopg import sql

from glyphoxa_pipelines.campaign.archive.tables import CAMPAIGN_TABLES
from glyphoxa_pipelines.db.operations import Op, execute, fetch_all, fetch_one, operation
from glyphoxa_pipelines.memory.errors import NotFoundError

GENERATED_COLUMNS_SQL = """SELECT table_name, column_name FROM information_schema.columns
    WHERE table_schema = current_schema() AND is_generated = 'ALWAYS'"""


class CampaignDump:
    def __init__(self, db: Any) -> None:
        self.db = db

    @operation
    def rows(self, campaign_id: str) -> Op:
        """(rows per table, embedding models used, schema version) of one campaign."""
        return (yield from _dump(campaign_id))


def _dump(campaign_id: str) -> Op:
    yield execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    found = yield fetch_one("SELECT 1 FROM campaigns WHERE id = %s", (campaign_id,))
    if found is None:
        raise NotFoundError(f"unknown campaign {campaign_id!r}")
    generated: dict[str, list[str]] = {}
    for r in (yield fetch_all(GENERATED_COLUMNS_SQL)):
        generated.setdefault(r["table_name"], []).append(r["column_name"])
    tables: dict[str, list[dict[str, Any]]] = {}
    for spec in CAMPAIGN_TABLES:
        key = "id" if spec.name == "campaigns" else "campaign_id"
        rows = yield fetch_all(
            sql.SQL("SELECT to_jsonb(t) - %s::text[] AS row FROM {} t WHERE {} = %s "
                    "ORDER BY {}").format(
                sql.Identifier(spec.name), sql.Identifier(key), sql.SQL(spec.order_by)
            ),
            (generated.get(spec.name, []), campaign_id),
        )
        tables[spec.name] = [r["row"] for r in rows]
    models = yield fetch_all(
        """SELECT name, dimension FROM embedding_models WHERE name IN (
               SELECT model FROM chunk_embeddings WHERE campaign_id = %(c)s
               UNION SELECT model FROM entry_embeddings WHERE campaign_id = %(c)s
               UNION SELECT active_embedding_model FROM campaigns WHERE id = %(c)s)
           ORDER BY name""",
        {"c": campaign_id},
    )
    version = yield fetch_one("SELECT max(version) AS v FROM schema_migrations")
    return tables, [dict(m) for m in models], int(version["v"] or 0)


def audio_files(tables: dict[str, list[dict[str, Any]]]) -> dict[str, Path]:
    """Recap audio that exists on this machine, by archive member name."""
    out: dict[str, Path] = {}
    for recap in tables.get("recaps", []):
        path = recap.get("audio_path")
        if path and Path(path).is_file():
            out[f"audio/{Path(path).name}"] = Path(path)
    return out
