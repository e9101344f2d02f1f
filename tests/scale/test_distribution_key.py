"""Sharding made ready on paper: Citus would distribute the memory tables by `campaign_id`
(a campaign's recall is then a single-shard query). Citus requires, of a distributed table,
that the distribution column be in every primary key and unique constraint, and in both sides
of every foreign key between distributed tables; small shared tables become reference tables.

This reads the real catalog after all migrations. Every table must carry a NOT NULL
`campaign_id` or be a named reference table, and no constraint Citus would refuse remains
(the list below is empty since migration 024): a new table, key or foreign key that breaks the
rule fails here instead of at the migration to Citus.
"""

from __future__ import annotations

from typing import Any

REFERENCE_TABLES = {
    "campaigns": "one row per campaign, read by every shard's foreign keys",
    "embedding_models": "a handful of model names",
    "schema_migrations": "the migration runner's bookkeeping (coordinator only)",
}

# Constraint name -> why it still needs a key without campaign_id. Empty since migration 024
# rekeyed the last 13 (DESIGN.md, "Past one machine"); an entry here needs a reason a reviewer
# would accept.
CITUS_BLOCKERS: dict[str, str] = {}

_TABLES = """
SELECT c.relname AS name,
       EXISTS (SELECT 1 FROM pg_attribute a
                WHERE a.attrelid = c.oid AND a.attname = 'campaign_id' AND a.attnotnull
                  AND NOT a.attisdropped) AS has_key
  FROM pg_class c
 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
"""

# Unique constraints (primary keys included) and foreign keys, with their columns (for a
# foreign key: both sides) and the tables involved.
_CONSTRAINTS = """
SELECT con.conname AS name, con.contype AS kind, con.conrelid::regclass::text AS tab,
       con.confrelid::regclass::text AS ref,
       ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(n, o)
               JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n
              ORDER BY k.o)::text[] AS cols,
       ARRAY(SELECT a.attname FROM unnest(coalesce(con.confkey, '{}')) WITH ORDINALITY k(n, o)
               JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n
              ORDER BY k.o)::text[] AS ref_cols
  FROM pg_constraint con
 WHERE con.connamespace = 'public'::regnamespace AND con.contype IN ('p', 'u', 'f')
UNION ALL
SELECT i.indexrelid::regclass::text, 'u', i.indrelid::regclass::text, '-',
       ARRAY(SELECT a.attname FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(n, o)
               JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n
              ORDER BY k.o)::text[],
       '{}'::text[]
  FROM pg_index i
  JOIN pg_class t ON t.oid = i.indrelid
 WHERE t.relnamespace = 'public'::regnamespace AND i.indisunique
   AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
"""


def _rows(db: Any, query: str) -> list[dict[str, Any]]:
    from glyphoxa_pipelines.db.operations import fetch_all

    def op():  # type: ignore[no-untyped-def]
        rows = yield fetch_all(query)
        return rows

    return db.run(op())


def citus_blockers(tables: list[dict[str, Any]], constraints: list[dict[str, Any]]
                   ) -> set[str]:
    """The constraints Citus would refuse with every non-reference table distributed by
    campaign_id. Pure: the catalog rows in, names out."""
    distributed = {t["name"] for t in tables if t["name"] not in REFERENCE_TABLES}
    blocked = set()
    for c in constraints:
        if c["tab"] not in distributed:
            continue
        if c["kind"] in ("p", "u") and "campaign_id" not in c["cols"] or c["kind"] == "f" and c["ref"] in distributed and not (
            "campaign_id" in c["cols"] and "campaign_id" in c["ref_cols"]
            and c["cols"].index("campaign_id") == c["ref_cols"].index("campaign_id")
        ):
            blocked.add(c["name"])
    return blocked


def test_every_table_is_distributed_by_campaign_or_a_named_reference_table(db: Any) -> None:
    tables = _rows(db, _TABLES)
    missing = sorted(t["name"] for t in tables
                     if not t["has_key"] and t["name"] not in REFERENCE_TABLES)
    assert missing == [], f"tables without a NOT NULL campaign_id: {missing}"
    assert {"entities", "relationships", "session_entries", "realtime_prefetch"} <= {
        t["name"] for t in tables if t["has_key"]}


def test_the_constraints_citus_would_refuse_are_exactly_the_known_ones(db: Any) -> None:
    blocked = citus_blockers(_rows(db, _TABLES), _rows(db, _CONSTRAINTS))
    new = sorted(blocked - CITUS_BLOCKERS.keys())
    fixed = sorted(CITUS_BLOCKERS.keys() - blocked)
    assert new == [], f"keyed without campaign_id (Citus refuses it): {new}"
    assert fixed == [], f"no longer blocking; drop from the list and DESIGN.md: {fixed}"


def test_the_rule_itself() -> None:
    tables = [{"name": "entities"}, {"name": "chunks"}, {"name": "campaigns"}]
    constraints = [
        {"name": "ok_pk", "kind": "p", "tab": "entities", "ref": "-",
         "cols": ["campaign_id", "id"], "ref_cols": []},
        {"name": "bad_pk", "kind": "p", "tab": "chunks", "ref": "-", "cols": ["id"],
         "ref_cols": []},
        {"name": "ok_ref_fk", "kind": "f", "tab": "chunks", "ref": "campaigns",
         "cols": ["campaign_id"], "ref_cols": ["id"]},
        {"name": "bad_fk", "kind": "f", "tab": "chunks", "ref": "entities",
         "cols": ["entity_id"], "ref_cols": ["id"]},
        {"name": "crossed_fk", "kind": "f", "tab": "chunks", "ref": "entities",
         "cols": ["campaign_id", "x"], "ref_cols": ["x", "campaign_id"]},
    ]
    assert citus_blockers(tables, constraints) == {"bad_pk", "bad_fk", "crossed_fk"}
