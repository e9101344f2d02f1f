"""Roll20 campaign JSON export: `characters` (with `attribs` and `bio`) and `handouts`.

A character someone controls is a player, else an NPC. Roll20 sheets carry hundreds of
attributes (hit points, spell slots, macros); only the descriptive ones a DM would put in
an NPC's identity are kept. Handouts become concepts from their `notes`. `gmnotes` are the
DM's alone: kept in the review batch for the DM, never written where an NPC could read them.
"""

from __future__ import annotations

from typing import Any

from glyphoxa_pipelines.campaign.tabletop.html_text import html_to_text
from glyphoxa_pipelines.campaign.tabletop.json_file import as_list
from glyphoxa_pipelines.campaign.tabletop.world import ImportedWorld, WorldBuilder

FORMAT = "roll20"
# Roll20 sheet attribute name -> Glyphoxa identity attribute.
_ATTRIBS = {
    "occupation": "occupation",
    "appearance": "appearance",
    "speaking_style": "speaking_style",
    "personality": "personality",
    "personality_traits": "personality",
    "alignment": "alignment",
    "race": "race",
    "class": "class",
    "background": "background",
    "ideals": "ideals",
    "bonds": "bonds",
    "flaws": "flaws",
    "age": "age",
    "gender": "gender",
    "npc_type": "creature_type",
}


def _text(value: Any) -> str:
    return html_to_text(value) if isinstance(value, str) else ""


def _attribs(raw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for a in raw if isinstance(raw, list) else []:
        if not isinstance(a, dict):
            continue
        key = _ATTRIBS.get(str(a.get("name", "")).strip().lower())
        value = a.get("current")
        if key and key not in out and isinstance(value, (str, int, float)):
            text = _text(value) if isinstance(value, str) else value
            if text not in ("", None):
                out[key] = text
    return out


def read_roll20(data: dict[str, Any], source: str) -> ImportedWorld:
    b = WorldBuilder(FORMAT, source)
    for i, ch in enumerate(as_list(data, "characters", b.problem)):
        where = f": characters[{i}]"
        if not isinstance(ch, dict):
            b.problem(where, "expected an object")
            continue
        controlled = str(ch.get("controlledby") or "").strip()
        kind = "player" if controlled and controlled != "all" else "npc"
        b.entity(where, ch.get("name"), kind, description=_text(ch.get("bio")),
                 attributes=_attribs(ch.get("attribs")), dm_notes=_text(ch.get("gmnotes")))
    for i, h in enumerate(as_list(data, "handouts", b.problem)):
        where = f": handouts[{i}]"
        if not isinstance(h, dict):
            b.problem(where, "expected an object")
            continue
        b.entity(where, h.get("name"), "concept", description=_text(h.get("notes")),
                 dm_notes=_text(h.get("gmnotes")))
    return b.finish()
