"""The NPC's hot context: who it is, what it knows, where it is, what was just said, and what
pre-fetch recalled — as structured JSON and as the prompt block the LLM sees.

Assembly is pure (rows in, context out) so it is deterministic and testable without a database.
The token budget trims the least important parts first: recalled memories (lowest score first),
then the oldest transcript lines, then the least confident facts, then quests; the NPC's
identity and its behaviour rules are never cut.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from typing import Any

from glyphoxa_pipelines.memory.fact_text import fact_sentence
from glyphoxa_pipelines.memory.visibility import is_secret


def estimate_tokens(text: str) -> int:
    """~4 characters per token (GPT-style BPE on English prose): cheap, no tokenizer needed on
    the hot path, and slightly pessimistic for names."""
    return (len(text) + 3) // 4


@dataclass(slots=True)
class Memory:
    """A recalled cold result with where it came from."""

    kind: str  # "chunk" | "entity" | "summary"
    text: str
    score: float
    source: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class HotContext:
    campaign_id: str
    session_id: str
    npc_id: str
    identity: dict[str, Any]
    facts: list[dict[str, Any]]
    scene: dict[str, Any]
    recent: list[dict[str, Any]]
    memories: list[dict[str, Any]]
    prompt: str = ""
    token_estimate: int = 0
    token_budget: int = 0
    trimmed: dict[str, int] = field(default_factory=dict)
    degraded: bool = False
    assembled_at: str = ""

    def as_dict(self) -> dict[str, Any]:
        """A shallow view for serialization. `dataclasses.asdict` deep-copies every nested
        value and was 18% of the server's time per hot-context request."""
        return {name: getattr(self, name) for name in _HOT_FIELDS}


_HOT_FIELDS = tuple(f.name for f in fields(HotContext))


def fact_dict(row: dict[str, Any], npc_id: str) -> dict[str, Any]:
    """A fact row (the store's `npc_identity.npc_facts_query`) as the context shows it."""
    secret = is_secret(row["visibility"])
    return {
        "id": row["id"],
        "text": fact_sentence(
            row["source_name"], row["rel_type"], row["target_name"], secret=secret
        ),
        "source": row["source_name"],
        "relation": row["rel_type"],
        "target": row["target_name"],
        "confidence": row["confidence"],
        "secret": secret,
        "session_id": row["session_id"],
        "observed_at": _iso(row["observed_at"]),
    }


def _iso(value: datetime | str | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return value.isoformat()


def entry_dict(row: dict[str, Any]) -> dict[str, Any]:
    when = row.get("spoken_at")
    return {
        "speaker": row.get("speaker_name") or row.get("speaker_id") or "Unknown",
        "role": row.get("speaker_role", "player"),
        "text": row["text"],
        "spoken_at": _iso(when),
        "entry_id": row.get("id"),
    }


# The keys a DM describes an NPC with (the design's `attributes:`), in the order the
# identity block shows them; any other attribute follows, in the file's order.
IDENTITY_KEYS: tuple[str, ...] = (
    "occupation",
    "appearance",
    "speaking_style",
    "personality",
    "alignment",
)


def _trait_text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_trait_text(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_trait_text(v)}" for k, v in value.items())
    return str(value).strip()


def _traits(attrs: dict[str, Any], profile: dict[str, Any]) -> list[tuple[str, str]]:
    """(key, text) pairs for "Who you are": the identity keys first, then the rest. The
    profile's personality and speaking style (the NPC's own, DM-tuned) win over the entity
    attribute of the same name; empty values are left out."""
    out: list[tuple[str, str]] = []
    for key in (*IDENTITY_KEYS, *(k for k in attrs if k not in IDENTITY_KEYS)):
        if key == "description":
            continue
        text = _trait_text(profile.get(key) or attrs.get(key) or "")
        if text:
            out.append((key, text))
    return out


def identity_dict(npc: dict[str, Any]) -> dict[str, Any]:
    """The NPC row (+ its profile as jsonb) as the context shows it."""
    attrs = npc.get("attributes") or {}
    p = npc.get("profile") or {}
    out: dict[str, Any] = {
        "id": npc["id"],
        "name": npc["name"],
        "type": npc["type"],
        "aliases": list(npc.get("aliases") or []),
        "description": _trait_text(attrs.get("description", "")),
        "traits": [{"key": k, "text": t} for k, t in _traits(attrs, p)],
    }
    if p:
        out.update(
            personality=p.get("personality", ""),
            speaking_style=p.get("speaking_style", ""),
            emotional_state=p.get("emotional_state", ""),
            behavior_rules=list(p.get("behavior_rules") or []),
            secret_knowledge=list(p.get("secret_knowledge") or []),
        )
    return out


def scene_dict(scene: dict[str, Any], entities: list[dict[str, Any]]) -> dict[str, Any]:
    """Scene ids resolved to names; unknown ids (or free-text quests) are kept as given."""
    by_id = {e["id"]: e for e in entities}

    def name(x: Any) -> dict[str, Any]:
        if isinstance(x, str) and x in by_id:
            ent = by_id[x]
            return {"id": x, "name": ent["name"], "type": ent["type"]}
        if isinstance(x, dict):
            return {"id": x.get("id"), "name": str(x.get("name") or x.get("id") or "")}
        return {"id": None, "name": str(x)}

    loc = scene.get("location")
    return {
        "location": name(loc) if loc else None,
        "present": [name(p) for p in scene.get("present", []) or []],
        "quests": [name(q) for q in scene.get("quests", []) or []],
    }


def _identity_lines(identity: dict[str, Any]) -> list[str]:
    lines = [f"You are {identity['name']} ({identity['type']})."]
    if identity.get("description"):
        lines.append(identity["description"])
    for trait in identity.get("traits") or ():
        label = trait["key"].replace("_", " ").strip().capitalize()
        lines.append(f"{label}: {trait['text']}")
    if identity.get("emotional_state"):
        lines.append(f"Current mood: {identity['emotional_state']}")
    rules = identity.get("behavior_rules") or []
    if rules:
        lines.append("Rules you always follow:")
        lines += [f"- {r}" for r in rules]
    secrets = identity.get("secret_knowledge") or []
    if secrets:
        lines.append("Things you know but guard (never reveal unless you choose to):")
        lines += [f"- {s}" for s in secrets]
    return lines


def render(ctx: HotContext) -> str:
    """The prompt block, sections in a fixed order."""
    out = ["## Who you are", *_identity_lines(ctx.identity)]
    if ctx.facts:
        out.append("## What you know")
        out += [f"- {f['text']}" for f in ctx.facts]
    scene = ctx.scene
    if scene.get("location") or scene.get("present") or scene.get("quests"):
        out.append("## The scene")
        if scene.get("location"):
            out.append(f"Location: {scene['location']['name']}")
        if scene.get("present"):
            out.append("Present: " + ", ".join(p["name"] for p in scene["present"]))
        if scene.get("quests"):
            out.append("Active quests: " + "; ".join(q["name"] for q in scene["quests"]))
    if ctx.memories:
        out.append("## What you recall")
        for m in ctx.memories:
            src = m.get("source") or {}
            where = ", ".join(
                str(v) for v in (src.get("session_id"), src.get("when")) if v
            )
            out.append(f"- {m['text']}" + (f" [{where}]" if where else ""))
    if ctx.recent:
        out.append("## Just now")
        out += [f"{r['speaker']}: {r['text']}" for r in ctx.recent]
    return "\n".join(out)


def fit_budget(ctx: HotContext, budget: int) -> HotContext:
    """Render, then drop the least important pieces until the estimate fits `budget`.

    Trimming order is fixed, so the same inputs always give the same block.
    """
    ctx.token_budget = budget
    trimmed = {"memories": 0, "recent": 0, "facts": 0, "quests": 0}
    ctx.prompt = render(ctx)
    if estimate_tokens(ctx.prompt) <= budget:  # the common case: one render
        ctx.token_estimate = estimate_tokens(ctx.prompt)
        ctx.trimmed = {}
        return ctx

    def over() -> bool:
        return estimate_tokens(render(ctx)) > budget

    # Memories: lowest score first (on ties the later one goes).
    while ctx.memories and over():
        worst = min(range(len(ctx.memories)), key=lambda i: (ctx.memories[i]["score"], -i))
        ctx.memories.pop(worst)
        trimmed["memories"] += 1
    # Oldest transcript lines, but keep the last two.
    while len(ctx.recent) > 2 and over():
        ctx.recent.pop(0)
        trimmed["recent"] += 1
    # Least confident facts (public before secret on ties: secrets shape behaviour).
    while ctx.facts and over():
        worst = min(
            range(len(ctx.facts)),
            key=lambda i: (ctx.facts[i]["confidence"], ctx.facts[i]["secret"], -i),
        )
        ctx.facts.pop(worst)
        trimmed["facts"] += 1
    while ctx.scene.get("quests") and over():
        ctx.scene["quests"].pop()
        trimmed["quests"] += 1
    ctx.prompt = render(ctx)
    if estimate_tokens(ctx.prompt) > budget:
        # What is left is identity and the last lines, and one of them alone is over budget
        # (a huge behaviour rule or utterance): the budget is a promise to the LLM call, so
        # the block is cut, keeping its head (who the NPC is).
        keep = max(0, budget * 4 - 4)
        trimmed["prompt_chars"] = len(ctx.prompt) - keep
        ctx.prompt = ctx.prompt[:keep] + "…"
    ctx.token_estimate = estimate_tokens(ctx.prompt)
    ctx.trimmed = {k: v for k, v in trimmed.items() if v}
    return ctx


def assemble(
    *,
    campaign_id: str,
    session_id: str,
    npc: dict[str, Any],
    facts: list[dict[str, Any]],
    scene: dict[str, Any],
    scene_entities: list[dict[str, Any]],
    recent: list[dict[str, Any]],
    memories: list[Memory],
    budget: int,
    max_memories: int = 6,
    assembled_at: str = "",
) -> HotContext:
    """Structured context + prompt block. Facts keep the store's order (own facts first, then
    by confidence); recent lines are oldest first; memories are ordered by score, then kind
    and text, for determinism."""
    mems = sorted(memories, key=lambda m: (-m.score, m.kind, m.text))[:max_memories]
    ctx = HotContext(
        campaign_id=campaign_id,
        session_id=session_id,
        npc_id=npc["id"],
        identity=identity_dict(npc),
        facts=[fact_dict(f, npc["id"]) for f in facts],
        scene=scene_dict(scene, scene_entities),
        recent=[entry_dict(e) for e in recent],
        memories=[asdict(m) for m in mems],
        assembled_at=assembled_at,
    )
    return fit_budget(ctx, budget)
