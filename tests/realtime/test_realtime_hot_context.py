"""Hot context assembly without a database: deterministic order and budget trimming."""

from __future__ import annotations

from realtime.hot_context import Memory, assemble, estimate_tokens

NPC = {"id": "olm", "type": "npc", "name": "Keeper Olm", "aliases": [], "attributes": {},
       "profile": {"personality": "patient", "behavior_rules": ["Speak softly"],
                   "emotional_state": "calm"}}


def _fact(i: int, conf: float, secret: bool = False) -> dict:
    return {"id": i, "source_id": "olm", "target_id": f"t{i}", "rel_type": "knows",
            "confidence": conf, "visibility": "secret" if secret else "public",
            "session_id": None, "observed_at": None, "source_name": "Keeper Olm",
            "target_name": f"Person {i}"}


def _build(budget: int, memories: list[Memory] | None = None):  # type: ignore[no-untyped-def]
    return assemble(
        campaign_id="c", session_id="s", npc=NPC,
        facts=[_fact(1, 0.9), _fact(2, 0.5), _fact(3, 0.5, secret=True)],
        scene={"location": "hall", "present": ["olm"], "quests": ["q1", "Free text quest"]},
        scene_entities=[{"id": "hall", "type": "location", "name": "Great Hall"},
                        {"id": "olm", "type": "npc", "name": "Keeper Olm"},
                        {"id": "q1", "type": "quest", "name": "Find the key"}],
        recent=[{"id": k, "speaker_name": "Ana", "speaker_role": "player",
                 "text": f"line {k} " + "word " * 10, "spoken_at": f"2026-01-01T00:00:{k:02d}"}
                for k in range(8)],
        memories=memories if memories is not None else [
            Memory("chunk", "the hall burned " + "x " * 30, 0.9, {"session_id": "s0"}),
            Memory("chunk", "a minor memory " + "y " * 30, 0.2, {"session_id": "s1"}),
            Memory("entity", "Find the key (quest)", 1.0, {}),
        ],
        budget=budget,
    )


def test_sections_in_fixed_order() -> None:
    ctx = _build(5000)
    p = ctx.prompt
    order = ["## Who you are", "## What you know", "## The scene", "## What you recall",
             "## Just now"]
    assert [p.index(h) for h in order] == sorted(p.index(h) for h in order)
    assert "Location: Great Hall" in p and "Active quests: Find the key; Free text quest" in p
    assert "Keeper Olm knows Person 3 (SECRET: do not reveal)" in p
    assert ctx.memories[0]["kind"] == "entity"  # highest score first
    assert ctx.token_estimate == estimate_tokens(p) and not ctx.trimmed
    assert _build(5000).prompt == p  # deterministic


def test_budget_trims_least_important_first() -> None:
    full = _build(5000)
    ctx = _build(full.token_estimate - 20)
    assert ctx.trimmed == {"memories": 1}
    assert "a minor memory" not in ctx.prompt and "the hall burned" in ctx.prompt
    ctx = _build(150)
    assert ctx.token_estimate <= 150
    assert ctx.trimmed["memories"] == 3 and ctx.trimmed["recent"] >= 1
    assert "You are Keeper Olm" in ctx.prompt and "Speak softly" in ctx.prompt
    assert [r["text"][:6] for r in ctx.recent] == [f"line {k}" for k in
                                                   range(8 - len(ctx.recent), 8)]
    ctx = _build(90)  # past memories and transcript: facts go, least confident first
    assert len(ctx.recent) == 2 and ctx.trimmed.get("facts")
    assert all(f["confidence"] == 0.9 or f["secret"] for f in ctx.facts)
    assert "You are Keeper Olm" in ctx.prompt
