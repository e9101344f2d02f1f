"""What better coreference could still add: the facts an episode's own sentences hold for the
verb reader if every unresolved subject and object had a referent (issue 16).

    PYTHONPATH=. python bench/knowledge_ceiling.py [--show] [C1E003 ...]

Each episode is extracted alone (as `bench/knowledge.py` extracts the gold episodes) with every
in-game sentence parsed, and every subject or object the extractor leaves without a referent
(a pronoun, a noun phrase: "it", "the creature", "your brother") given a stand-in of its own
that fits any type. A fact read with one side a stand-in and the other a known entity (a name,
or a pronoun the extractor resolves) is one that a coreference rule could still make; the
count is the most such rules can add, whatever they resolve to. Verbs in the relation table
and verbs outside it (custom: the DM's narration only, here with a resolved pronoun as their
doer too) are counted apart. Facts with both sides unresolved are not counted: the extractor
never reads two guesses in one fact. Noun facts (kin, possession) are not surveyed.

This patches the verb reader's internals for the run (`svo.referent`, its type check and its
custom-verb check); it measures, it is not a rule. Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.knowledge import EPISODES, campaign_setup, data_dir, load_episode  # noqa: E402

STAND_IN = "?"  # id prefix of a stand-in referent
_NO_STAND_IN = frozenset(
    "what that which who whom there this one something anything everything nothing those "
    "these all both some each the a an".split()
)


class _AnyEntity(dict):  # type: ignore[type-arg]
    """The session's entities, and a stand-in of no particular type for any other id."""

    def __missing__(self, key: str) -> Any:
        from glyphoxa_pipelines.memory.models import Entity

        return Entity("ceiling", key, "npc", key, [])


@contextmanager
def _stand_ins(found: list[dict[str, Any]]) -> Iterator[None]:
    """Patch the verb reader so unresolved arguments get stand-ins, and record the facts
    they take part in (`found`) instead of keeping them."""
    from glyphoxa_pipelines.processing.extraction import patterns, svo

    saved = (svo.referent, svo.svo_types_fit, svo.verb_relation, svo.Speakers.count,
             patterns.svo_facts)
    referent, relation, count, read = saved[0], saved[2], saved[3], saved[4]

    def with_stand_in(token: Any, spans: Any, speakers: Any) -> tuple[str | None, str | None]:
        eid, how = referent(token, spans, speakers)
        if eid is None and token.pos_ in ("PRON", "NOUN", "PROPN") and (
                token.lower_ not in _NO_STAND_IN):
            return f"{STAND_IN}{token.lower_}", "stand-in"
        return eid, how

    def svo_facts(s: Any, doc: Any, spans: Any, entities: Any, speakers: Any,
                  confidence: Any) -> list[Any]:
        kept = []
        for f in read(s, doc, spans, _AnyEntity(entities), speakers, confidence):
            ends = (f.source.startswith(STAND_IN), f.target.startswith(STAND_IN))
            if not any(ends):
                kept.append(f)
            elif not all(ends):
                found.append({"source": f.source, "rel": f.rel_type, "target": f.target,
                              "custom": bool(f.attributes.get("custom")),
                              "speaker": s.entry.speaker_role, "quoted": s.quoted,
                              "sentence": s.text[:200]})
        return kept

    svo.referent = with_stand_in
    svo.svo_types_fit = lambda rel, a, b: a.id != b.id
    svo.verb_relation = lambda lemma, prep, doer, a, b: relation(lemma, prep, None, a, b)
    svo.Speakers.count = lambda self: count(self) + 2  # every in-game sentence is parsed
    patterns.svo_facts = svo_facts
    try:
        yield
    finally:
        (svo.referent, svo.svo_types_fit, svo.verb_relation, svo.Speakers.count,
         patterns.svo_facts) = saved


def ceiling(ep: str) -> list[dict[str, Any]]:
    from glyphoxa_pipelines.processing.extraction import extract_knowledge

    entries, _ = load_episode(ep, (EPISODES.index(ep) + 1) * 100_000)
    found: list[dict[str, Any]] = []
    with _stand_ins(found):
        extract_knowledge(entries, campaign_setup(), campaign_id="cr", session_id=ep.lower())
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("episodes", nargs="*", default=["C1E003"])
    parser.add_argument("--show", action="store_true", help="list every candidate fact")
    args = parser.parse_args()
    if not (data_dir() / "crd3" / "cleaned").exists():
        print(json.dumps({"skipped": "no CRD3 data"}))
        return
    out = {}
    for ep in args.episodes:
        found = ceiling(ep)
        table = [f for f in found if not f["custom"]]
        custom = [f for f in found if f["custom"]]
        out[ep] = {"table": len(table), "custom": len(custom)}
        print(f"{ep}: {len(table)} table-verb and {len(custom)} custom-verb facts hang on an "
              f"unresolved subject or object")
        if args.show:
            for f in found:
                kind = "custom" if f["custom"] else "table"
                print(f"  [{kind}, {f['speaker']}{', quoted' if f['quoted'] else ''}] "
                      f"{f['source']} {f['rel']} {f['target']} :: {f['sentence']}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
