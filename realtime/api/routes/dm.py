"""DM edits: entities, NPC profiles, facts (confirm / reject / retcon / visibility), review
queue (pending facts, and new spellings of known entities offered as aliases). Each is effective
in the next hot context: contexts are assembled from the tables."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter, Depends, Response

from glyphoxa_pipelines.memory import Entity, NotFoundError, NpcProfile, Relationship
from realtime.api.deps import service
from realtime.schemas import (
    EntityIn,
    EntityPatch,
    FactIn,
    NpcProfileIn,
    RetconIn,
    RevealIn,
    SpellingIn,
    VisibilityIn,
)
from realtime.service import MemoryService

router = APIRouter(prefix="/v1/campaigns/{campaign_id}", tags=["dm"])


@router.post("/entities", status_code=201)
async def add_entity(
    campaign_id: str, body: EntityIn, svc: MemoryService = Depends(service)
) -> dict[str, Any]:
    ent = await svc.add_entity(
        Entity(campaign_id, body.id or "", body.type, body.name, body.aliases, body.attributes)
    )
    return asdict(ent)


@router.patch("/entities/{entity_id}")
async def update_entity(
    campaign_id: str, entity_id: str, body: EntityPatch, svc: MemoryService = Depends(service)
) -> dict[str, Any]:
    ent = await svc.update_entity(
        campaign_id,
        entity_id,
        name=body.name,
        type=body.type,
        aliases=body.aliases,
        attributes=body.attributes,
        remove_attributes=body.remove_attributes,
    )
    return asdict(ent)


@router.delete("/entities/{entity_id}", status_code=204)
async def delete_entity(
    campaign_id: str, entity_id: str, svc: MemoryService = Depends(service)
) -> Response:
    if not await svc.delete_entity(campaign_id, entity_id):
        raise NotFoundError(f"unknown entity {entity_id!r} in campaign {campaign_id!r}")
    return Response(status_code=204)


@router.put("/npcs/{npc_id}/profile")
async def put_profile(
    campaign_id: str, npc_id: str, body: NpcProfileIn, svc: MemoryService = Depends(service)
) -> dict[str, Any]:
    prof = await svc.upsert_profile(NpcProfile(campaign_id, npc_id, **body.model_dump()))
    return asdict(prof)


async def _relationship(svc: MemoryService, campaign_id: str, body: FactIn) -> Relationship:
    return Relationship(
        campaign_id=campaign_id,
        source_id=await svc.resolve_id(campaign_id, body.source),
        target_id=await svc.resolve_id(campaign_id, body.target),
        rel_type=body.relation,
        visibility=body.visibility,
        known_by=body.known_by,
        session_id=body.session_id,
        evidence=body.evidence,
        confidence=body.confidence,
        provenance="dm",
        dm_confirmed=True,
    )


@router.post("/facts", status_code=201)
async def add_fact(
    campaign_id: str, body: FactIn, svc: MemoryService = Depends(service)
) -> dict[str, Any]:
    return asdict(await svc.add_fact(await _relationship(svc, campaign_id, body)))


@router.post("/facts/{fact_id}/confirm")
async def confirm_fact(
    campaign_id: str, fact_id: int, svc: MemoryService = Depends(service)
) -> dict[str, Any]:
    return asdict(await svc.set_fact_status(campaign_id, fact_id, "canon", True))


@router.post("/facts/{fact_id}/reject")
async def reject_fact(
    campaign_id: str, fact_id: int, svc: MemoryService = Depends(service)
) -> dict[str, Any]:
    return asdict(await svc.set_fact_status(campaign_id, fact_id, "rejected", False))


@router.post("/facts/{fact_id}/retcon")
async def retcon_fact(
    campaign_id: str, fact_id: int, body: RetconIn | None = None,
    svc: MemoryService = Depends(service),
) -> dict[str, Any]:
    replacement = None
    if body is not None and body.replacement is not None:
        replacement = await _relationship(svc, campaign_id, body.replacement)
    return await svc.retcon(campaign_id, fact_id, replacement)


@router.put("/facts/{fact_id}/visibility")
async def set_visibility(
    campaign_id: str, fact_id: int, body: VisibilityIn, svc: MemoryService = Depends(service)
) -> dict[str, Any]:
    rel = await svc.set_visibility(campaign_id, fact_id, body.visibility, body.known_by)
    return asdict(rel)


@router.post("/facts/{fact_id}/reveal")
async def reveal(
    campaign_id: str, fact_id: int, body: RevealIn, svc: MemoryService = Depends(service)
) -> dict[str, Any]:
    """One call: a hidden or secret fact told to `to`, or public when `to` is null."""
    return asdict(await svc.reveal(campaign_id, fact_id, body.to))


@router.get("/review-queue")
async def review_queue(campaign_id: str, svc: MemoryService = Depends(service)) -> dict[str, Any]:
    return {"campaign_id": campaign_id, "facts": await svc.review_queue(campaign_id),
            "spellings": await svc.open_spellings(campaign_id)}


@router.post("/entities/{entity_id}/spellings/accept")
async def accept_spelling(
    campaign_id: str, entity_id: str, body: SpellingIn, svc: MemoryService = Depends(service)
) -> dict[str, Any]:
    """The offered spelling becomes one of the entity's aliases (a target of the corrector)."""
    return asdict(await svc.accept_spelling(campaign_id, entity_id, body.spelling))


@router.post("/entities/{entity_id}/spellings/dismiss")
async def dismiss_spelling(
    campaign_id: str, entity_id: str, body: SpellingIn, svc: MemoryService = Depends(service)
) -> dict[str, Any]:
    """The spelling is never offered for this entity again."""
    heard = await svc.dismiss_spelling(campaign_id, entity_id, body.spelling)
    return {"entity_id": entity_id, "spelling": heard, "dismissed": True}
