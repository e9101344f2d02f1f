"""Knowledge a DM would sign: extraction measured on the eight CRD3 episodes (issue 16).

    PYTHONPATH=. python bench/knowledge.py [--base /path/to/base-worktree] [--show]

Figures, for this tree's extractor and (with --base) the extractor of another checkout run side
by side in a subprocess (`PYTHONPATH=<base> python bench/knowledge.py --dump`):

- entities on the two gold episodes (`bench/gold/crd3_knowledge.json`, held out from tuning),
  each extracted alone on an empty graph: precision (in-game and typed as the gold allows),
  recall of the gold entities; and "in campaign order": the episode extracted after the ones
  before it, scored on its new entities plus the graph's entities it mentions (their types
  as the graph holds them, their names with the spellings the session resolved to them);
- facts: specific (stated, not `associated_with`) facts per episode over all eight, and on the
  gold episodes their precision by the gold file's matching rule (evidence turn within 3 turns
  of a gold fact between the same two entities; anything else counts as wrong);
- correction damage: the episodes extracted in order into one graph (as a campaign would), then
  each episode's clean human lines corrected with the names the earlier episodes produced as
  targets; a changed word is damage when the transcript had an ordinary lower-case word there
  or only a possessive/plural ending differs (`damaging`); changes that respell a capitalized
  name ("Singorn" -> "Syngorn") are counted apart. "before"
  uses every extracted name, as the base commit's loaders did; "after" applies
  `memory/correction_targets.py`, with a spelling's sessions counted as the earlier episodes
  whose text holds it (the store counts tagged chunks that hold it).

The campaign set-up (`campaign_setup`): before the first session a DM's campaign file declares
the party once (`attributes: {party: true}` on a faction entity, as in `campaign_file.py`), so the
extractor can read the DM's "you all" / long scene-setting "you" as that party. CRD3 names its
party "Vox Machina"; every run starts from a graph holding that one entity (both checkouts, the
gold episodes alone too). It is the DM's, not extracted: it is not scored as an entity.

What counts as a specific fact: a stated (not inferred `associated_with`) relation the extractor
produced, whether it went to canon or to the DM's review queue (a fact below the campaign's
threshold is still a fact the extractor offers the DM to sign); the canon share is printed too.
One fact said many times in a session counts once (the extractor merges its statements). The
players' recorded introductions are replayed at the start of most CRD3 episodes, so the same
backstory facts recur in every one: the count is also printed without the facts first read in
a player's monologue (>= `INTRO_WORDS` words), and as facts new to the campaign (not stated in
an earlier episode, in campaign order).

Ends with one JSON line. Data is read by path (GLYPHOXA_SHARED_DATA or ../shared/data).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "bench" / "gold" / "crd3_knowledge.json"
EPISODES = [f"C1E00{n}" for n in range(1, 9)]
TURN_WINDOW = 3
PARTY = {"id": "vox-machina", "name": "Vox Machina", "aliases": [], "type": "faction"}
INTRO_WORDS = 150  # a player's turn this long is a recorded introduction, not play


def campaign_setup() -> list[Any]:
    """The graph a DM's campaign file gives before session one: the party, marked as such."""
    from glyphoxa_pipelines.memory.models import Entity

    return [Entity("cr", PARTY["id"], PARTY["type"], PARTY["name"], list(PARTY["aliases"]),
                   attributes={"party": True}, provenance="dm")]


def data_dir() -> Path:
    env = os.environ.get("GLYPHOXA_SHARED_DATA")
    return Path(env) if env else ROOT.parent / "shared" / "data"


def intro_turns(entries: list[Any], turn_of: dict[Any, int]) -> list[int]:
    """Turns of the players' monologues: the recorded introductions CRD3 replays."""
    return sorted(turn_of[e.spoken_at] for e in entries
                  if e.speaker_role == "player" and len(e.text.split()) >= INTRO_WORDS)


def load_episode(ep: str, first_id: int) -> tuple[list[Any], dict[Any, int]]:
    """Entries of one episode and each entry's turn index (by its time: times are unique)."""
    from glyphoxa_pipelines.campaign.transcript_import import import_transcript

    imported = import_transcript(data_dir() / "crd3" / "cleaned" / f"{ep}.json")
    entries = imported.as_entries("cr", ep.lower(), first_id=first_id)
    return entries, {e.spoken_at: line for e, line in zip(entries, imported.lines, strict=True)}


def _entity_json(e: Any) -> dict[str, Any]:
    return {"id": e.id, "name": e.name, "aliases": list(e.aliases), "type": e.type}


def _result_json(
    result: Any, names: dict[str, str], turn_of: dict[Any, int], graph: list[Any] = ()
) -> dict[str, Any]:
    by_id = {e.id: e for e in graph if e.id != PARTY["id"]}  # the DM's own entity: not scored
    resolved = {r.entity_id for r in result.resolutions if r.existing and r.entity_id in by_id}
    return {
        "entities": [_entity_json(e) for e in result.entities],
        # the graph's entities this session mentions, with the spellings it resolved to them
        # ("Stillben" to C1E001's "Stilben"): in campaign order, the session's view
        "resolved": [_entity_json(by_id[i]) | {"aliases": [
            *by_id[i].aliases, *result.new_aliases.get(i, [])]} for i in sorted(resolved)],
        "facts": [
            {
                "source": names.get(r.source_id, r.source_id),
                "target": names.get(r.target_id, r.target_id),
                "rel": r.rel_type,
                "status": r.status,
                "assertion": r.assertion,
                "turn": turn_of.get(r.observed_at, -1),
                "evidence": r.evidence,
            }
            for r in result.relationships
        ],
    }


def dump(gold_episodes: list[str]) -> dict[str, Any]:
    """Run the importable extractor: gold episodes alone, then all eight in order."""
    from glyphoxa_pipelines.processing.extraction import extract_knowledge

    out: dict[str, Any] = {"alone": {}, "in_order": {}, "seconds": {}}
    for n, ep in enumerate(EPISODES, 1):
        if ep not in gold_episodes:
            continue
        entries, turn_of = load_episode(ep, n * 100_000)
        t0 = time.perf_counter()
        result = extract_knowledge(entries, campaign_setup(), campaign_id="cr",
                                   session_id=ep.lower())
        out["seconds"][f"alone:{ep}"] = round(time.perf_counter() - t0, 2)
        names = {PARTY["id"]: PARTY["name"]} | {e.id: e.name for e in result.entities}
        out["alone"][ep] = _result_json(result, names, turn_of)
    graph: list[Any] = campaign_setup()
    for n, ep in enumerate(EPISODES, 1):
        entries, turn_of = load_episode(ep, n * 100_000)
        t0 = time.perf_counter()
        result = extract_knowledge(entries, graph, campaign_id="cr", session_id=ep.lower())
        out["seconds"][f"in_order:{ep}"] = round(time.perf_counter() - t0, 2)
        before = list(graph)
        graph += result.entities
        names = {e.id: e.name for e in graph}
        out["in_order"][ep] = _result_json(result, names, turn_of, before)
        out["in_order"][ep]["intro_turns"] = intro_turns(entries, turn_of)
    return out


def key(name: str) -> str:
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "", text)


def _gold_index(gold_ep: dict[str, Any]) -> dict[str, dict[str, Any]]:
    index = {}
    for g in gold_ep["entities"]:
        for form in [g["name"], *g["aliases"]]:
            index[key(form)] = g
    return index


def score_entities(extracted: list[dict[str, Any]], gold_ep: dict[str, Any]) -> dict[str, Any]:
    index = _gold_index(gold_ep)
    right, wrong, found = [], [], set()
    for e in extracted:
        hit = next((index[key(f)] for f in [e["name"], *e["aliases"]] if key(f) in index), None)
        if hit is not None and e["type"] in hit["types"]:
            right.append(e["name"])
            found.add(hit["name"])
        else:
            why = "not gold" if hit is None else f"type {e['type']} not {hit['types']}"
            wrong.append(f"{e['name']} ({why})")
    gold_names = [g["name"] for g in gold_ep["entities"]]
    return {
        "precision": round(len(right) / len(extracted), 3) if extracted else 0.0,
        "recall": round(len(found) / len(gold_names), 3),
        "extracted": len(extracted),
        "wrong": wrong,
        "missed": [n for n in gold_names if n not in found],
    }


def specific(facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in facts if f["rel"] != "associated_with" and f["assertion"] == "stated"]


def score_facts(
    facts: list[dict[str, Any]], gold_ep: dict[str, Any], extracted: list[dict[str, Any]]
) -> dict[str, Any]:
    index = _gold_index(gold_ep)
    index[key(PARTY["name"])] = {"name": PARTY["name"]}  # the set-up's party (gold: "party")
    aliases = {e["name"]: [e["name"], *e["aliases"]] for e in extracted}

    def gold_name(name: str) -> str | None:
        for form in aliases.get(name, [name]):
            if key(form) in index:
                return index[key(form)]["name"]
        return None

    right, wrong = [], []
    for f in specific(facts):
        pair = {gold_name(f["source"]), gold_name(f["target"])}
        ok = any(
            pair == {g["subject"], g["object"]}
            and any(abs(f["turn"] - t) <= TURN_WINDOW for t in g["turns"])
            for g in gold_ep["facts"]
        )
        line = f"{f['source']} {f['rel']} {f['target']} @{f['turn']}"
        (right if ok else wrong).append(line)
    n = len(right) + len(wrong)
    return {
        "precision": round(len(right) / n, 3) if n else 0.0,
        "specific": n,
        "right": right,
        "wrong": wrong,
    }


def _sessions_with(spelling: str, texts: list[str]) -> int:
    pattern = re.compile(r"(?<![\w'’])" + re.escape(spelling) + r"(?![\w'’])")
    return sum(1 for t in texts if pattern.search(t))


def damaging(original: str, replacement: str) -> bool:
    """A change that breaks a right word: the human wrote an ordinary (lower-case) word there,
    or only a possessive or plural ending differs ("trinkets" -> "Trinket's"). A capitalized
    original spelled otherwise ("Singorn" -> "Syngorn") is a respelling of the name itself."""
    if original[:1].islower():
        return True
    strip = re.compile(r"(?:['’]s|s)$")
    return strip.sub("", original.lower()) == strip.sub("", replacement.lower())


def correction_damage(in_order: dict[str, Any], *, rule: bool) -> dict[str, Any]:
    """Changed words per 10,000 words when each episode's clean lines are corrected with the
    names extracted from the episodes before it."""
    from glyphoxa_pipelines.correction import build_index, correct
    from glyphoxa_pipelines.memory.correction_targets import correction_targets
    from glyphoxa_pipelines.memory.models import Entity

    graph: list[Entity] = []
    texts: list[str] = []
    words = changed = damaged = 0
    examples: list[str] = []
    for n, ep in enumerate(EPISODES, 1):
        entries, _ = load_episode(ep, n * 100_000)
        if graph:
            if rule:
                seen = {
                    (e.id, s): _sessions_with(s, texts)
                    for e in graph
                    for s in [e.name, *e.aliases, *(a.lower() for a in [e.name, *e.aliases]
                                                    if a.isalpha())]
                }
                targets = correction_targets(graph, seen)
            else:
                targets = graph
            index = build_index(targets)
            for entry in entries:
                result = correct(entry.text, index)
                words += len(entry.text.split())
                for c in result.corrections:
                    n_words = max(1, len(str(c.original).split()))
                    changed += n_words
                    if damaging(str(c.original), str(c.replacement)):
                        damaged += n_words
                        if len(examples) < 12:
                            examples.append(f"{ep}: {c.original!r} -> {c.replacement!r}")
        texts.append(" ".join(e.text for e in entries))
        graph += [
            Entity("cr", x["id"], x["type"], x["name"], x["aliases"], provenance="extracted")
            for x in in_order[ep]["entities"]
        ]
    return {
        "per_10k_words": round(damaged / words * 10_000, 3) if words else 0.0,
        "changes_per_10k_words": round(changed / words * 10_000, 3) if words else 0.0,
        "damaged_words": damaged,
        "changed_words": changed,
        "words": words,
        "examples": examples,
    }


def evaluate(result: dict[str, Any], gold: dict[str, Any], *, rule: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"episodes": {}}
    for ep, gold_ep in gold["episodes"].items():
        alone = result["alone"][ep]
        ordered = result["in_order"][ep]
        seen = ordered["entities"] + ordered["resolved"]
        out["episodes"][ep] = {
            "entities": score_entities(alone["entities"], gold_ep),
            "facts": score_facts(alone["facts"], gold_ep, alone["entities"]),
            "entities_in_order": score_entities(seen, gold_ep),
            "facts_in_order": score_facts(ordered["facts"], gold_ep, seen),
        }
    out["specific_facts_in_order"] = {
        ep: len(specific(r["facts"])) for ep, r in result["in_order"].items()
    }
    out["specific_canon_in_order"] = {
        ep: sum(f["status"] == "canon" for f in specific(r["facts"]))
        for ep, r in result["in_order"].items()
    }
    out["specific_without_intros"] = {
        ep: sum(f["turn"] not in set(r["intro_turns"]) for f in specific(r["facts"]))
        for ep, r in result["in_order"].items()
    }
    out["specific_new_to_campaign"] = new_to_campaign(result["in_order"])
    out["party_facts_in_order"] = {
        ep: sum(PARTY["name"] in (f["source"], f["target"]) for f in specific(r["facts"]))
        for ep, r in result["in_order"].items()
    }
    out["damage"] = correction_damage(result["in_order"], rule=rule)
    out["seconds"] = result["seconds"]
    return out


def new_to_campaign(in_order: dict[str, Any]) -> dict[str, int]:
    """Per episode, its specific facts no earlier episode stated (a replayed introduction's
    facts count in the first episode that has them)."""
    seen: set[tuple[str, str, str]] = set()
    out = {}
    for ep, r in in_order.items():
        here = {(f["source"], f["rel"], f["target"]) for f in specific(r["facts"])}
        out[ep] = len(here - seen)
        seen |= here
    return out


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0


def _pooled(scores: list[dict[str, Any]]) -> float:
    """Right facts over all facts of the gold episodes (an episode with none adds nothing)."""
    n = sum(len(f["right"]) + len(f["wrong"]) for f in scores)
    return round(sum(len(f["right"]) for f in scores) / n, 3) if n else 0.0


def summary(ev: dict[str, Any]) -> dict[str, Any]:
    eps = ev["episodes"].values()
    return {
        "entity_precision": _mean([e["entities"]["precision"] for e in eps]),
        "entity_recall": _mean([e["entities"]["recall"] for e in eps]),
        "entity_precision_in_order": _mean([e["entities_in_order"]["precision"] for e in eps]),
        "entity_recall_in_order": _mean([e["entities_in_order"]["recall"] for e in eps]),
        "fact_precision": _pooled([e["facts"] for e in eps]),
        "fact_precision_in_order": _pooled([e["facts_in_order"] for e in eps]),
        "specific_facts_gold_min": min(e["facts"]["specific"] for e in eps),
        "specific_facts_all_min": min(ev["specific_facts_in_order"].values()),
        "specific_facts_without_intros_min": min(ev["specific_without_intros"].values()),
        "specific_facts_new_to_campaign": sum(ev["specific_new_to_campaign"].values()),
        "damage_per_10k": ev["damage"]["per_10k_words"],
    }


def report(label: str, ev: dict[str, Any], show: bool) -> None:
    print(f"== {label}")
    for ep, e in ev["episodes"].items():
        ent, facts = e["entities"], e["facts"]
        print(
            f"  {ep} (held out) entities: precision {ent['precision']:.3f}, recall "
            f"{ent['recall']:.3f} ({ent['extracted']} extracted); specific facts "
            f"{facts['specific']}, precision {facts['precision']:.3f}"
        )
        eo, fo = e["entities_in_order"], e["facts_in_order"]
        print(
            f"    in campaign order (new + the graph's entities it mentions): entities "
            f"precision {eo['precision']:.3f}, recall {eo['recall']:.3f} ({eo['extracted']}); "
            f"specific facts {fo['specific']}, precision {fo['precision']:.3f}"
        )
        if show:
            print(f"    in order, wrong entities: {eo['wrong']}")
            print(f"    in order, right facts: {fo['right']}; wrong: {fo['wrong']}")
            print(f"    wrong entities: {ent['wrong']}")
            print(f"    missed: {ent['missed']}")
            print(f"    right facts: {facts['right']}")
            print(f"    wrong facts: {facts['wrong']}")
    print(f"  specific facts per episode (in order): {ev['specific_facts_in_order']}")
    print(f"    of which canon (the rest in the DM's review queue): "
          f"{ev['specific_canon_in_order']}")
    print(f"    of which about the party ({PARTY['name']}): {ev['party_facts_in_order']}")
    print(f"    without the facts first read in a player's introduction: "
          f"{ev['specific_without_intros']}")
    print(f"    new to the campaign (not stated in an earlier episode): "
          f"{ev['specific_new_to_campaign']}")
    d = ev["damage"]
    print(
        f"  correction damage: {d['damaged_words']} damaged words in {d['words']} "
        f"= {d['per_10k_words']:.3f} per 10,000 words ({d['changed_words']} changed in all, "
        f"{d['changes_per_10k_words']:.3f} per 10,000; the rest respell a name)"
    )
    if show:
        print(f"    {d['examples']}")
    print(f"  extraction seconds: {ev['seconds']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="checkout whose extractor is 'before'")
    parser.add_argument("--show", action="store_true", help="list wrong and missed items")
    parser.add_argument("--dump", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not (data_dir() / "crd3" / "cleaned").exists():
        print(f"CRD3 not found under {data_dir()}; set GLYPHOXA_SHARED_DATA", file=sys.stderr)
        print(json.dumps({"skipped": "no CRD3 data"}))
        return
    gold = json.loads(GOLD.read_text())
    if args.dump:
        print(json.dumps(dump(list(gold["episodes"]))))
        return
    figures: dict[str, Any] = {}
    if args.base:
        env = {**os.environ, "PYTHONPATH": str(args.base.resolve())}
        proc = subprocess.run(
            [sys.executable, __file__, "--dump"], env=env, capture_output=True, text=True,
            check=True,
        )
        before = evaluate(json.loads(proc.stdout.strip().splitlines()[-1]), gold, rule=False)
        report(f"before ({args.base})", before, args.show)
        figures["before"] = summary(before)
    after = evaluate(dump(list(gold["episodes"])), gold, rule=True)
    report("after (this tree)", after, args.show)
    figures["after"] = summary(after)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
