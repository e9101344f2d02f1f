"""Imported worlds wait for the DM: stage a batch, list what waits, accept or discard it.

The design: "The DM reviews and confirms imported entities before they enter the knowledge
graph." A read world is staged as one `import_batches` row (migration 021) named by a hash
of the file's content, so staging the same file twice changes nothing. Accepting (all, or
chosen entities) writes them as the DM's own rows (provenance `dm`: the DM confirmed them,
and a later campaign-file reload leaves DM rows alone), with the facts between accepted or
existing entities as DM-confirmed canon. An entity whose id the campaign already has is
left as it is: the import never overwrites the world. DM-only notes stay in the batch.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from glyphoxa_pipelines.campaign.campaign_file import check_campaign_id
from glyphoxa_pipelines.campaign.tabletop.world import ImportedWorld
from glyphoxa_pipelines.db.operations import Op, execute, fetch_all, fetch_one, operation
from glyphoxa_pipelines.memory.errors import NotFoundError


class ReviewError(ValueError):
    """The batch cannot be accepted or discarded as asked (already decided, unknown name)."""


@dataclass(frozen=True, slots=True)
class StagedBatch:
    id: str
    status: str
    created: bool  # False when the same file was staged before: nothing changed
    entities: int
    facts: int


@dataclass(frozen=True, slots=True)
class PendingBatch:
    id: str
    format: str
    source: str
    status: str
    entities: list[dict[str, Any]]
    facts: list[dict[str, Any]]
    accepted: list[str]


@dataclass(frozen=True, slots=True)
class AcceptReport:
    batch_id: str
    added: list[str]
    already_there: list[str]
    facts: int
    status: str


def batch_id(fmt: str, text: str) -> str:
    return hashlib.sha256(f"{fmt}\n{text}".encode()).hexdigest()[:16]


class ImportReview:
    def __init__(self, db: Any) -> None:
        self.db = db

    @operation
    def stage(self, campaign_id: str, world: ImportedWorld, text: str) -> Op:
        bid = batch_id(world.format, text)
        check_campaign_id(campaign_id)
        yield execute(
            "INSERT INTO campaigns (id, name) VALUES (%s, %s) ON CONFLICT (id) DO NOTHING",
            (campaign_id, campaign_id),
        )
        row = yield fetch_one(
            """INSERT INTO import_batches (campaign_id, id, format, source, entities, facts)
               VALUES (%s, %s, %s, %s, %s::jsonb, %s::jsonb)
               ON CONFLICT (campaign_id, id) DO NOTHING RETURNING status""",
            (campaign_id, bid, world.format, world.source,
             json.dumps([e.as_json() for e in world.entities]),
             json.dumps([f.as_json() for f in world.facts])),
        )
        created = row is not None
        if row is None:  # staged before: report how it stands, change nothing
            row = yield fetch_one(
                "SELECT status FROM import_batches WHERE campaign_id = %s AND id = %s",
                (campaign_id, bid),
            )
        return StagedBatch(bid, row["status"], created, len(world.entities), len(world.facts))

    @operation
    def batches(self, campaign_id: str, status: str | None = "pending") -> Op:
        rows = yield fetch_all(
            """SELECT id, format, source, status, entities, facts, accepted
               FROM import_batches
               WHERE campaign_id = %s AND (%s::text IS NULL OR status = %s)
               ORDER BY created_at, id""",
            (campaign_id, status, status),
        )
        return [PendingBatch(r["id"], r["format"], r["source"], r["status"], r["entities"],
                             r["facts"], list(r["accepted"])) for r in rows]

    def _pending(self, campaign_id: str, bid: str) -> Op:
        row = yield fetch_one(
            """SELECT id, status, entities, facts, accepted FROM import_batches
               WHERE campaign_id = %s AND id = %s FOR UPDATE""",
            (campaign_id, bid),
        )
        if row is None:
            raise NotFoundError(f"no import batch {bid!r} in campaign {campaign_id!r}")
        if row["status"] != "pending":
            raise ReviewError(f"import batch {bid} was already {row['status']}")
        return row

    @operation
    def accept(self, campaign_id: str, bid: str, names: list[str] | None = None) -> Op:
        """Accept the whole batch, or the entities named (by name, alias or id)."""
        row = yield from self._pending(campaign_id, bid)
        waiting = [e for e in row["entities"] if e["id"] not in set(row["accepted"])]
        chosen = waiting if not names else _choose(waiting, names, bid)
        added: list[str] = []
        there: list[str] = []
        for e in chosen:
            new = yield fetch_one(
                """INSERT INTO entities (campaign_id, id, type, name, aliases, attributes,
                       provenance)
                   VALUES (%s, %s, %s, %s, %s, %s::jsonb, 'dm')
                   ON CONFLICT (campaign_id, id) DO NOTHING RETURNING id""",
                (campaign_id, e["id"], e["type"], e["name"], e["aliases"],
                 json.dumps(e["attributes"])),
            )
            (added if new else there).append(e["id"])
        accepted = [*row["accepted"], *(e["id"] for e in chosen)]
        facts = yield from self._facts(campaign_id, row["facts"], set(accepted),
                                       {e["id"] for e in chosen})
        done = len(accepted) == len(row["entities"])
        status = "accepted" if done else "pending"
        yield execute(
            """UPDATE import_batches SET accepted = %s, status = %s,
                   decided_at = CASE WHEN %s THEN now() END
               WHERE campaign_id = %s AND id = %s""",
            (accepted, status, done, campaign_id, bid),
        )
        return AcceptReport(bid, added, there, facts, status)

    def _facts(
        self, campaign_id: str, facts: list[dict[str, Any]], accepted: set[str], now: set[str]
    ) -> Op:
        """Facts with an end accepted just now and the other accepted (now or before)."""
        ready = [f for f in facts
                 if {f["source_id"], f["target_id"]} <= accepted
                 and {f["source_id"], f["target_id"]} & now]
        written = 0
        for f in ready:
            new = yield fetch_one(
                """INSERT INTO relationships (campaign_id, source_id, rel_type, target_id,
                       provenance, dm_confirmed, status, evidence)
                   VALUES (%s, %s, %s, %s, 'dm', true, 'canon', %s)
                   ON CONFLICT (campaign_id, source_id, rel_type, target_id)
                       WHERE invalidated_at IS NULL DO NOTHING
                   RETURNING id""",
                (campaign_id, f["source_id"], f["rel_type"], f["target_id"],
                 f"imported from {f['origin']}"),
            )
            written += new is not None
        return written

    @operation
    def discard(self, campaign_id: str, bid: str) -> Op:
        row = yield from self._pending(campaign_id, bid)
        yield execute(
            """UPDATE import_batches SET status = 'discarded', decided_at = now()
               WHERE campaign_id = %s AND id = %s""",
            (campaign_id, bid),
        )
        return len(row["entities"]) - len(row["accepted"])


def _choose(waiting: list[dict[str, Any]], names: list[str], bid: str) -> list[dict[str, Any]]:
    chosen: dict[str, dict[str, Any]] = {}
    for name in names:
        key = name.strip().lower()
        hits = [e for e in waiting
                if key in (e["id"], e["name"].lower(), *(a.lower() for a in e["aliases"]))]
        if not hits:
            raise ReviewError(f"{name!r} is not waiting in import batch {bid}")
        chosen.update((e["id"], e) for e in hits)
    return list(chosen.values())
