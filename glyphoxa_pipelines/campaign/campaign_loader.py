"""Load a parsed campaign file into the memory store in one transaction.

The service loads campaign files on every start, so a reload must be safe: the same file
changes nothing, a changed file updates what it changed, and nothing the DM decided after a
load is undone. Each row the file loads remembers what the file said (`file_values`); fields
merge three ways (`file_merge`): the file's change applies only where the stored value still
is what the file said last time. A fact the DM retconned stays retconned with its history; an
entity or fact the file drops is deleted only if nobody edited it, otherwise it is handed to
the DM (provenance `dm`). DM-made rows, and DM-confirmed facts with the same key as a file
fact, are left alone; extracted rows the file also names become the file's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from glyphoxa_pipelines.campaign.campaign_file import (
    CampaignFile,
    NpcSpec,
    RelationshipSpec,
    check_campaign_id,
    reference_table,
)
from glyphoxa_pipelines.campaign.file_merge import as_real, merge, normalize, untouched
from glyphoxa_pipelines.db.operations import Op, execute, fetch_all, fetch_one, operation
from glyphoxa_pipelines.memory.campaigns import CampaignStore
from glyphoxa_pipelines.memory.graph_facts import SYMMETRIC_RELATIONS
from glyphoxa_pipelines.memory.models import Campaign

ENTITY_FIELDS = ("type", "name", "aliases", "attributes")
FACT_FIELDS = (
    "attributes",
    "confidence",
    "status",
    "dm_confirmed",
    "visibility",
    "known_by",
    "evidence",
)
PROFILE_FIELDS = (
    "personality",
    "speaking_style",
    "emotional_state",
    "behavior_rules",
    "secret_knowledge",
    "voice",
)
_JSON_FIELDS = frozenset({"attributes", "behavior_rules", "secret_knowledge", "voice"})


@dataclass(frozen=True)
class LoadReport:
    campaign_id: str
    entities: int
    relationships: int
    npcs: int
    entities_changed: int
    removed_entities: int
    removed_relationships: int
    dm_kept: int = 0  # fields (or retconned facts) where the DM's decision outlived the file
    handed_to_dm: int = 0  # rows the file dropped but the DM had edited: kept, now the DM's


def _params(values: Mapping[str, Any]) -> dict[str, Any]:
    """Statement parameters: JSON columns serialized, everything else as is."""
    return {k: json.dumps(v) if k in _JSON_FIELDS else v for k, v in values.items()}


def _key(source: str, rel_type: str, target: str) -> tuple[str, str, str]:
    """A fact's identity in the file and the store; a symmetric relation (allied_with, ...)
    is one fact whichever end the file names first."""
    if rel_type in SYMMETRIC_RELATIONS:
        source, target = sorted((source, target))
    return (source, rel_type, target)


class CampaignChoiceError(ValueError):
    """The file and the operator disagree on (or neither names) the campaign to load into."""


def target_campaign(parsed: CampaignFile, campaign_id: str | None) -> str:
    """The campaign a load writes to: the one chosen at load time, else the file's own.

    A file naming another campaign than the one chosen is refused rather than loaded into
    either: one of the two is a mistake, and loading would overwrite a world."""
    file_id = parsed.campaign.id if parsed.campaign is not None else None
    if campaign_id is not None and file_id is not None and file_id != campaign_id:
        raise CampaignChoiceError(
            f"the file describes campaign {file_id!r}, not {campaign_id!r}; nothing was loaded"
        )
    chosen = campaign_id or file_id
    if chosen is None:
        raise CampaignChoiceError(
            "the file has no 'campaign:' block: choose the campaign with --campaign"
        )
    return check_campaign_id(chosen)


class _Tally:
    def __init__(self) -> None:
        self.changed = 0
        self.dm_kept = 0
        self.handed = 0


class CampaignLoader:
    def __init__(self, db: Any) -> None:
        self.db = db
        self.campaigns = CampaignStore(db)

    @operation
    def load(self, parsed: CampaignFile, campaign_id: str | None = None) -> Op:
        """Load `parsed` into `campaign_id` (or the file's own campaign); see
        `target_campaign`. Without a `campaign:` block a new campaign is named by its id
        and an existing one keeps its name and settings."""
        cid = target_campaign(parsed, campaign_id)
        info = parsed.campaign
        if info is not None:
            yield from CampaignStore.upsert.op(
                self.campaigns,
                Campaign(cid, info.name, info.description, info.system, info.review_threshold),
            )
        else:
            yield execute(
                "INSERT INTO campaigns (id, name) VALUES (%s, %s) ON CONFLICT (id) DO NOTHING",
                (cid, cid),
            )
        tally = _Tally()
        yield from self._entities(cid, parsed, tally)
        refs = reference_table(parsed)
        removed_rels = yield from self._facts(cid, parsed.relationships, refs, tally)
        yield from self._profiles(cid, parsed.npcs, refs, tally)
        removed_ents = yield from self._drop_entities(
            cid, {e.entity_id for e in parsed.entities}, tally
        )
        return LoadReport(
            campaign_id=cid,
            entities=len(parsed.entities),
            relationships=len(parsed.relationships),
            npcs=len(parsed.npcs),
            entities_changed=tally.changed,
            removed_entities=removed_ents,
            removed_relationships=removed_rels,
            dm_kept=tally.dm_kept,
            handed_to_dm=tally.handed,
        )

    # -- entities -------------------------------------------------------------------------
    def _entities(self, cid: str, parsed: CampaignFile, tally: _Tally) -> Op:
        rows = yield fetch_all(
            """SELECT id, type, name, aliases, attributes, provenance, file_values
               FROM entities WHERE campaign_id = %s""",
            (cid,),
        )
        stored = {r["id"]: r for r in rows}
        for spec in parsed.entities:
            file = normalize(
                {"type": spec.type, "name": spec.name, "aliases": list(spec.aliases),
                 "attributes": dict(spec.attributes)}
            )
            row = stored.get(spec.entity_id)
            if row is None:
                yield execute(
                    """INSERT INTO entities (campaign_id, id, type, name, aliases, attributes,
                           provenance, file_values)
                       VALUES (%(c)s, %(id)s, %(type)s, %(name)s, %(aliases)s,
                               %(attributes)s::jsonb, 'import', %(fv)s::jsonb)""",
                    dict(_params(file), c=cid, id=spec.entity_id, fv=json.dumps(file)),
                )
                tally.changed += 1
                continue
            if row["provenance"] == "dm":  # the DM's own entity under the same id
                tally.dm_kept += 1
                continue
            # An extracted entity the file also names becomes the file's; an imported one
            # merges with what the DM changed since the last load.
            base = row["file_values"] if row["provenance"] == "import" else dict(row)
            m = merge(row, base, file)
            tally.dm_kept += m.dm_kept
            changed = m.differs_from(row)
            if not changed and normalize(row["file_values"]) == file:
                continue
            tally.changed += changed
            yield execute(
                """UPDATE entities SET type = %(type)s, name = %(name)s, aliases = %(aliases)s,
                       attributes = %(attributes)s::jsonb, file_values = %(fv)s::jsonb,
                       session_id = CASE WHEN provenance = 'import' THEN session_id END,
                       extractor_version = CASE WHEN provenance = 'import'
                                                THEN extractor_version END,
                       provenance = 'import',
                       updated_at = CASE WHEN %(changed)s THEN now() ELSE updated_at END
                   WHERE campaign_id = %(c)s AND id = %(id)s""",
                dict(
                    _params(m.values),
                    c=cid,
                    id=spec.entity_id,
                    fv=json.dumps(file),
                    changed=changed,
                ),
            )

    def _drop_entities(self, cid: str, keep: set[str], tally: _Tally) -> Op:
        """Imported entities the file no longer has: deleted when nobody edited them (nor
        their profile) and no fact carrying a DM decision or history involves them; else
        handed to the DM."""
        rows = yield fetch_all(
            """SELECT e.id, e.type, e.name, e.aliases, e.attributes, e.file_values,
                      to_jsonb(p) AS profile
               FROM entities e LEFT JOIN npc_profiles p
                    ON p.campaign_id = e.campaign_id AND p.entity_id = e.id
               WHERE e.campaign_id = %s AND e.provenance = 'import' AND NOT (e.id = ANY(%s))""",
            (cid, sorted(keep)),
        )
        if not rows:
            return 0
        clean = [
            r["id"]
            for r in rows
            if untouched(r, r["file_values"])
            and (r["profile"] is None or untouched(r["profile"], r["profile"]["file_values"]))
        ]
        deleted = yield fetch_all(
            """DELETE FROM entities e WHERE e.campaign_id = %s AND e.id = ANY(%s)
                   AND NOT EXISTS (
                       SELECT 1 FROM relationships r
                       WHERE r.campaign_id = e.campaign_id
                         AND (r.source_id = e.id OR r.target_id = e.id)
                         AND (r.provenance <> 'extracted' OR r.dm_confirmed
                              OR r.status = 'rejected'))
               RETURNING e.id""",
            (cid, clean),
        )
        gone = {r["id"] for r in deleted}
        handed = [r["id"] for r in rows if r["id"] not in gone]
        if handed:
            yield execute(
                """UPDATE entities SET provenance = 'dm', file_values = NULL
                   WHERE campaign_id = %s AND id = ANY(%s)""",
                (cid, handed),
            )
            tally.handed += len(handed)
        return len(gone)

    # -- facts ----------------------------------------------------------------------------
    def _facts(
        self, cid: str, specs: list[RelationshipSpec], refs: dict[str, str], tally: _Tally
    ) -> Op:
        rows = yield fetch_all(
            """SELECT id, source_id, rel_type, target_id, attributes, confidence, status,
                      dm_confirmed, visibility, known_by, evidence, provenance,
                      invalidated_at, file_values
               FROM relationships
               WHERE campaign_id = %s AND (file_values IS NOT NULL OR invalidated_at IS NULL)
               ORDER BY id""",
            (cid,),
        )
        tracked: dict[tuple[str, str, str], dict[str, Any]] = {}
        current: dict[tuple[str, str, str], dict[str, Any]] = {}
        for r in rows:
            key = _key(r["source_id"], r["rel_type"], r["target_id"])
            if r["file_values"] is not None:
                tracked[key] = r  # the latest row the file made for this key
            if r["invalidated_at"] is None:
                current[key] = r
        kept: set[int] = set()
        seen: set[tuple[str, str, str]] = set()
        for spec in specs:
            key = _key(refs[spec.source.lower()], spec.type, refs[spec.target.lower()])
            if key in seen:
                continue  # the same fact stated twice (or a symmetric one from both ends)
            seen.add(key)
            file = _fact_values(spec, refs)
            row = tracked.get(key)
            if row is not None and row["invalidated_at"] is not None:
                kept.add(row["id"])  # retconned by the DM: stays history, never re-added
                tally.dm_kept += 1
                continue
            if row is None:
                row = current.get(key)
                if row is not None and (row["provenance"] != "extracted" or row["dm_confirmed"]):
                    tally.dm_kept += 1  # the DM's own fact, or one the DM confirmed
                    continue
            if row is None:
                new = yield fetch_one(
                    """INSERT INTO relationships (campaign_id, source_id, rel_type, target_id,
                           attributes, confidence, assertion, provenance, dm_confirmed,
                           status, visibility, known_by, evidence, file_values)
                       VALUES (%(c)s, %(s)s, %(t)s, %(o)s, %(attributes)s::jsonb,
                           %(confidence)s, 'stated', 'import', %(dm_confirmed)s, %(status)s,
                           %(visibility)s, %(known_by)s, %(evidence)s, %(fv)s::jsonb)
                       RETURNING id""",
                    dict(_params(file), c=cid, s=key[0], t=key[1], o=key[2],
                         fv=json.dumps(file)),
                )
                kept.add(new["id"])
                continue
            kept.add(row["id"])
            m = merge(row, row["file_values"], file) if row["provenance"] == "import" else None
            values = m.values if m is not None else file
            tally.dm_kept += m.dm_kept if m is not None else 0
            if m is not None and not m.differs_from(row) and normalize(row["file_values"]) == file:
                continue
            yield execute(
                """UPDATE relationships SET attributes = %(attributes)s::jsonb,
                       confidence = %(confidence)s, status = %(status)s,
                       dm_confirmed = %(dm_confirmed)s, visibility = %(visibility)s,
                       known_by = %(known_by)s, evidence = %(evidence)s,
                       file_values = %(fv)s::jsonb,
                       assertion = CASE WHEN provenance = 'import' THEN assertion
                                        ELSE 'stated' END,
                       session_id = CASE WHEN provenance = 'import' THEN session_id END,
                       extractor_version = CASE WHEN provenance = 'import'
                                                THEN extractor_version END,
                       provenance = 'import', updated_at = now()
                   WHERE id = %(id)s""",
                dict(_params(values), id=row["id"], fv=json.dumps(file)),
            )
        return (yield from self._drop_facts(tracked, kept, tally))

    def _drop_facts(
        self, tracked: dict[tuple[str, str, str], dict[str, Any]], kept: set[int], tally: _Tally
    ) -> Op:
        """Facts the file no longer has: deleted when current and unedited; a fact the DM
        edited becomes the DM's; history (retconned facts) is kept, no longer the file's."""
        dropped = [r for r in tracked.values() if r["id"] not in kept]
        clean = [
            r["id"]
            for r in dropped
            if r["invalidated_at"] is None and untouched(r, r["file_values"])
        ]
        others = [r["id"] for r in dropped if r["id"] not in set(clean)]
        removed = 0
        if clean:
            removed = yield execute("DELETE FROM relationships WHERE id = ANY(%s)", (clean,))
        if others:
            yield execute(
                """UPDATE relationships SET file_values = NULL,
                       provenance = CASE WHEN invalidated_at IS NULL THEN 'dm'
                                         ELSE provenance END
                   WHERE id = ANY(%s)""",
                (others,),
            )
            tally.handed += sum(r["invalidated_at"] is None for r in dropped if r["id"] in others)
        return removed

    # -- NPC profiles ---------------------------------------------------------------------
    def _profiles(self, cid: str, specs: list[NpcSpec], refs: dict[str, str], tally: _Tally) -> Op:
        rows = yield fetch_all(
            f"""SELECT entity_id, {", ".join(PROFILE_FIELDS)}, file_values
                FROM npc_profiles WHERE campaign_id = %s""",
            (cid,),
        )
        stored = {r["entity_id"]: r for r in rows}
        for npc in specs:
            eid = refs[npc.name.lower()]
            file = normalize(
                {
                    "personality": npc.personality,
                    "speaking_style": npc.speaking_style,
                    "emotional_state": npc.emotional_state,
                    "behavior_rules": list(npc.behavior_rules),
                    "secret_knowledge": list(npc.secret_knowledge),
                    "voice": dict(npc.voice),  # type: ignore[arg-type]
                }
            )
            row = stored.get(eid)
            if row is None:
                values = file
            else:
                m = merge(row, row["file_values"], file)
                tally.dm_kept += m.dm_kept
                if not m.differs_from(row) and normalize(row["file_values"]) == file:
                    continue
                values = m.values
            yield execute(
                """INSERT INTO npc_profiles (campaign_id, entity_id, personality,
                       speaking_style, emotional_state, behavior_rules, secret_knowledge,
                       voice, file_values)
                   VALUES (%(c)s, %(e)s, %(personality)s, %(speaking_style)s,
                       %(emotional_state)s, %(behavior_rules)s::jsonb,
                       %(secret_knowledge)s::jsonb, %(voice)s::jsonb, %(fv)s::jsonb)
                   ON CONFLICT (campaign_id, entity_id) DO UPDATE SET
                       personality = EXCLUDED.personality,
                       speaking_style = EXCLUDED.speaking_style,
                       emotional_state = EXCLUDED.emotional_state,
                       behavior_rules = EXCLUDED.behavior_rules,
                       secret_knowledge = EXCLUDED.secret_knowledge, voice = EXCLUDED.voice,
                       file_values = EXCLUDED.file_values, updated_at = now()""",
                dict(_params(values), c=cid, e=eid, fv=json.dumps(file)),
            )


def _fact_values(spec: RelationshipSpec, refs: dict[str, str]) -> dict[str, Any]:
    """What the file says about a fact, in the form the store reads it back."""
    visibility = spec.visibility
    known_by: list[str] = []
    if isinstance(visibility, list):
        known_by = [refs[n.lower()] for n in visibility]
        visibility = "secret"
    return normalize(
        {
            "attributes": dict(spec.attributes),
            "confidence": as_real(spec.confidence),
            "status": "canon",
            "dm_confirmed": True,
            "visibility": visibility,
            "known_by": known_by,
            "evidence": spec.evidence,
        }
    )
