"""Keyword boosting: the campaign's names as faster-whisper `hotwords`, most likely first.

faster-whisper puts the hotwords into the decoder's previous-text prompt and cuts them at half
the decoder's context (223 tokens for Whisper), keeping the start: so the order is the
priority. The scene's location and the people present come first, then entities said in the
last turns, then NPCs, places, factions, items and the rest; aliases follow their entity.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from glyphoxa_pipelines.memory import Entity

# Whisper's decoder context is 448 tokens; faster-whisper keeps 223 of them for hotwords.
WHISPER_PROMPT_TOKENS = 223
TYPE_ORDER = ("npc", "location", "faction", "item", "quest", "event")


def estimate_whisper_tokens(text: str) -> int:
    """Fantasy names split into short BPE pieces: about 3 characters per token."""
    return (len(text) + 2) // 3


def _said(entity: Entity, text: str) -> bool:
    for name in (entity.name, *entity.aliases):
        if name and re.search(rf"\b{re.escape(name)}\b", text, re.IGNORECASE):
            return True
    return False


def ranked_names(
    entities: Iterable[Entity],
    *,
    scene: dict[str, Any] | None = None,
    recent_text: Sequence[str] = (),
) -> list[str]:
    """Every name and alias once, scene first, then recently said, then by type and name."""
    scene = scene or {}
    scene_ids = [scene.get("location"), *(scene.get("present") or [])]
    scene_rank = {
        (x.get("id") if isinstance(x, dict) else x): i
        for i, x in enumerate(s for s in scene_ids if s)
    }
    recent = " ".join(recent_text[-10:])

    def key(e: Entity) -> tuple[int, int, int, str]:
        if e.id in scene_rank:
            return (0, scene_rank[e.id], 0, e.name)
        if recent and _said(e, recent):
            return (1, 0, 0, e.name)
        kind = TYPE_ORDER.index(e.type) if e.type in TYPE_ORDER else len(TYPE_ORDER)
        return (2, kind, 0, e.name.lower())

    out: list[str] = []
    seen: set[str] = set()
    for entity in sorted(entities, key=key):
        for name in (entity.name, *entity.aliases):
            folded = name.strip().lower()
            if folded and folded not in seen:
                seen.add(folded)
                out.append(name.strip())
    return out


def hotwords_text(
    names: Sequence[str],
    *,
    max_tokens: int = WHISPER_PROMPT_TOKENS - 23,  # headroom for the estimate's error
    count_tokens: Callable[[str], int] = estimate_whisper_tokens,
) -> str | None:
    """Names joined with spaces until `max_tokens` (None when there are none)."""
    chosen: list[str] = []
    used = 0
    for name in names:
        cost = count_tokens(" " + name)
        if used + cost > max_tokens:
            break
        chosen.append(name)
        used += cost
    return " ".join(chosen) or None
