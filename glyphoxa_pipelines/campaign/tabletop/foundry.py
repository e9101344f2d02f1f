"""Foundry VTT world JSON: `actors`, `items`, `journal`, `scenes`.

Actors become players (`character`) or NPCs (any other actor type), items items, journal
entries concepts (their pages' text), scenes locations. Descriptions are HTML, stripped to
text; the few descriptive fields of a sheet (alignment, race, ...) become attributes, the
rest of the game system's data does not (it is rules state, not who someone is). An actor
whose embedded items match a world item `OWNS` it; an actor with a token on a scene is
`LOCATED_AT` that scene.
"""

from __future__ import annotations

from typing import Any

from glyphoxa_pipelines.campaign.tabletop.html_text import html_to_text
from glyphoxa_pipelines.campaign.tabletop.json_file import as_list, dig
from glyphoxa_pipelines.campaign.tabletop.world import ImportedWorld, WorldBuilder

FORMAT = "foundry"
# Sheet fields worth an NPC's identity, as (attribute, path under the document's `system`).
_DETAIL_FIELDS = (
    ("occupation", ("details", "occupation")),
    ("appearance", ("details", "appearance")),
    ("alignment", ("details", "alignment")),
    ("race", ("details", "race")),
    ("background", ("details", "background")),
    ("personality", ("details", "trait")),
    ("ideals", ("details", "ideal")),
    ("bonds", ("details", "bond")),
    ("flaws", ("details", "flaw")),
)


def _system(doc: dict[str, Any]) -> dict[str, Any]:
    """Foundry v10+ keeps sheet data in `system`, older worlds in `data`."""
    sys = doc.get("system") if isinstance(doc.get("system"), dict) else doc.get("data")
    return sys if isinstance(sys, dict) else {}


def _html(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("value") or value.get("public") or ""
    return html_to_text(value) if isinstance(value, str) else ""


def _details(sys: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for attr, path in _DETAIL_FIELDS:
        value = dig(sys, *path)
        if isinstance(value, dict):
            value = value.get("value")
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            text = _html(value) if isinstance(value, str) else value
            if text not in ("", None):
                out[attr] = text
    return out


def read_foundry(data: dict[str, Any], source: str) -> ImportedWorld:
    b = WorldBuilder(FORMAT, source)
    actor_ids: dict[str, str] = {}
    items_by_name: dict[str, str] = {}
    for i, item in enumerate(as_list(data, "items", b.problem)):
        if not isinstance(item, dict):
            b.problem(f": items[{i}]", "expected an object")
            continue
        eid = b.entity(f": items[{i}]", item.get("name"), "item",
                       description=_html(dig(_system(item), "description")))
        if eid:
            items_by_name[str(item.get("name")).strip().lower()] = eid
    for i, actor in enumerate(as_list(data, "actors", b.problem)):
        where = f": actors[{i}]"
        if not isinstance(actor, dict):
            b.problem(where, "expected an object")
            continue
        sys = _system(actor)
        kind = "player" if actor.get("type") == "character" else "npc"
        bio = dig(sys, "details", "biography") or dig(sys, "biography") or dig(sys, "description")
        proto = dig(actor, "prototypeToken", "name") or dig(actor, "token", "name")
        eid = b.entity(where, actor.get("name"), kind, description=_html(bio),
                       aliases=[proto] if isinstance(proto, str) else [],
                       attributes=_details(sys))
        if eid is None:
            continue
        if isinstance(actor.get("_id"), str):
            actor_ids[actor["_id"]] = eid
        for owned in actor.get("items") or []:
            target = items_by_name.get(str(dig(owned, "name") or "").strip().lower())
            if target:
                b.fact(where, eid, "OWNS", target)
    for i, entry in enumerate(as_list(data, "journal", b.problem)):
        where = f": journal[{i}]"
        if not isinstance(entry, dict):
            b.problem(where, "expected an object")
            continue
        pages = [p for p in entry.get("pages") or [] if isinstance(p, dict)]
        text = "\n".join(_html(dig(p, "text", "content")) for p in pages)
        b.entity(where, entry.get("name"), "concept",
                 description=text or _html(entry.get("content")))
    for i, scene in enumerate(as_list(data, "scenes", b.problem)):
        where = f": scenes[{i}]"
        if not isinstance(scene, dict):
            b.problem(where, "expected an object")
            continue
        nav = scene.get("navName")
        sid = b.entity(where, scene.get("name"), "location",
                       aliases=[nav] if isinstance(nav, str) else [],
                       description=_html(scene.get("description")))
        for token in scene.get("tokens") or [] if sid else []:
            actor = actor_ids.get(str(dig(token, "actorId")))
            if actor and sid:
                b.fact(where, actor, "LOCATED_AT", sid)
    return b.finish()
