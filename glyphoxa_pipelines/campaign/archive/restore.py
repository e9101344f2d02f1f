"""Write an archive's rows into this home, in one transaction, or refuse and write nothing.

The campaign (or the `--as` id) must not exist here, and the archive's sessions must not:
session ids are home-wide (they are Dagster partition keys). Entry and fact numbers are
kept when free here (so a restored campaign reads exactly as it was exported) and renumbered
together with every reference when another campaign holds them. Embedding models the
archive used are registered (with their HNSW index) before their vectors are written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psycopg import sql
from psycopg.types.json import Jsonb

from glyphoxa_pipelines.campaign.archive.bundle import ArchiveError, Bundle
from glyphoxa_pipelines.campaign.archive.tables import CAMPAIGN_TABLES, ENTRY_REFS, FACT_REFS
from glyphoxa_pipelines.campaign.campaign_file import check_campaign_id
from glyphoxa_pipelines.db.operations import Op, execute, fetch_all, fetch_one, operation
from glyphoxa_pipelines.memory.semantic_index import SemanticIndex
from glyphoxa_pipelines.memory.session_log import claim_session_ids_op

_BATCH = 500


@dataclass(frozen=True, slots=True)
class RestoreReport:
    campaign_id: str
    rows: dict[str, int]
    renumbered: bool
    audio_files: int


def _columns_sql() -> str:
    return """SELECT column_name FROM information_schema.columns
              WHERE table_schema = current_schema() AND table_name = %s
                AND is_generated = 'NEVER' ORDER BY ordinal_position"""


class CampaignRestore:
    def __init__(self, db: Any) -> None:
        self.db = db

    @operation
    def restore(self, bundle: Bundle, as_id: str | None, audio_dir: Path) -> Op:
        original = bundle.manifest["campaign"]
        cid = check_campaign_id(as_id or original, "--as")
        version = yield fetch_one("SELECT max(version) AS v FROM schema_migrations")
        if int(bundle.manifest.get("schema_version", 0)) > int(version["v"] or 0):
            raise ArchiveError(
                "manifest.json: the archive was made by a newer Glyphoxa (schema "
                f"{bundle.manifest.get('schema_version')}); run glyphoxa migrate with it first"
            )
        if (yield fetch_one("SELECT 1 FROM campaigns WHERE id = %s", (cid,))) is not None:
            raise ArchiveError(
                f"campaign {cid!r} already exists in this home: import it --as another id"
            )
        tables = {spec.name: bundle.rows(spec.name) for spec in CAMPAIGN_TABLES}
        if len(tables["campaigns"]) != 1 or tables["campaigns"][0].get("id") != original:
            raise ArchiveError("tables/campaigns.jsonl: expected the one campaign of the manifest")
        sessions = [s["id"] for s in tables["sessions"]]
        yield from claim_session_ids_op(sessions)
        taken = yield fetch_all("SELECT id FROM sessions WHERE id = ANY(%s)", (sessions,))
        if taken:
            raise ArchiveError(
                f"session {taken[0]['id']!r} already exists in this home (session ids are "
                "home-wide): import the archive into another home"
            )
        for model in bundle.manifest.get("embedding_models", []):
            yield from SemanticIndex.register_model.op(
                SemanticIndex(self.db), model["name"], int(model["dimension"])
            )
        for row_list in tables.values():
            for row in row_list:
                if "campaign_id" in row:
                    row["campaign_id"] = cid
        tables["campaigns"][0]["id"] = cid
        renumbered = yield from self._renumber(tables, "session_entries", ENTRY_REFS)
        renumbered |= yield from self._renumber(tables, "relationships", FACT_REFS)
        audio = _restore_audio(bundle, tables["recaps"], audio_dir)
        counts: dict[str, int] = {}
        for spec in CAMPAIGN_TABLES:
            counts[spec.name] = yield from self._insert(spec.name, tables[spec.name])
        return RestoreReport(cid, counts, renumbered, audio)

    def _renumber(
        self, tables: dict[str, list[dict[str, Any]]], table: str, refs: dict[str, tuple[str, ...]]
    ) -> Op:
        ids = [int(r["id"]) for r in tables[table]]
        if not ids:
            return False
        clash = yield fetch_one(
            sql.SQL("SELECT 1 FROM {} WHERE id = ANY(%s) LIMIT 1").format(sql.Identifier(table)),
            (ids,),
        )
        seq = sql.SQL("pg_get_serial_sequence({}, 'id')").format(sql.Literal(table))
        if clash is None:  # keep the numbers; move the sequence past them
            yield fetch_one(
                sql.SQL("SELECT setval({seq}, GREATEST(%s, nextval({seq})))").format(seq=seq),
                (max(ids),),
            )
            return False
        fresh = yield fetch_all(
            sql.SQL("SELECT nextval({}) AS id FROM generate_series(1, %s)").format(seq),
            (len(ids),),
        )
        mapping = dict(zip(sorted(ids), (int(r["id"]) for r in fresh), strict=True))
        for name, columns in refs.items():
            for row in tables[name]:
                for col in columns:
                    if row.get(col) is not None:
                        row[col] = mapping.get(int(row[col]))
        return True

    def _insert(self, table: str, rows: list[dict[str, Any]]) -> Op:
        if not rows:
            return 0
        present = {k for r in rows for k in r}
        cols = [r["column_name"] for r in (yield fetch_all(_columns_sql(), (table,)))
                if r["column_name"] in present]
        col_list = sql.SQL(", ").join(sql.Identifier(c) for c in cols)
        statement = sql.SQL(
            "INSERT INTO {t} ({cols}) OVERRIDING SYSTEM VALUE "
            "SELECT {cols} FROM jsonb_populate_recordset(NULL::{t}, %s::jsonb)"
        ).format(t=sql.Identifier(table), cols=col_list)
        for start in range(0, len(rows), _BATCH):
            yield execute(statement, (Jsonb(rows[start : start + _BATCH]),))
        return len(rows)


def _restore_audio(bundle: Bundle, recaps: list[dict[str, Any]], audio_dir: Path) -> int:
    """Recap audio into this home's recap folder; rows point at the restored files. Files
    are written before the rows; a refused restore leaves at most unreferenced files."""
    written = 0
    for recap in recaps:
        path = recap.get("audio_path")
        member = f"audio/{Path(path).name}" if path else None
        if member is None or member not in bundle.members:
            continue
        target = audio_dir / Path(path).name
        audio_dir.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_bytes() != bundle.members[member]:
            target.write_bytes(bundle.members[member])
        recap["audio_path"] = str(target)
        written += 1
    return written
