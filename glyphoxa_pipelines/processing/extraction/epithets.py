"""A capitalised epithet set beside a name is that name's other name, not an entity of its own.

"Bahamut, the Platinum Dragon, had been gone" and "the Platinum Dragon, Bahamut, watches":
the story names one god twice, and a second entity "Platinum Dragon" would split its facts.
The epithet's candidate is folded into the name's (its spelling becomes the name's alias,
so its later mentions are the name's). Only a true apposition: the pair closes the phrase
(a comma that starts no list item, an "of" phrase or the sentence's end; a verb after it
makes a clause: "In Kraghammer, the Greyspine Mines are deep"), it is not an item of a list
("Vex, the Ranger Guild, and Scanlan"), not a place phrase before its clause ("In the
Greyspine Mountains, Kraghammer, ..."), and the two are not of clashing kinds (a person and
a place or body). An epithet the graph already knows as an entity keeps its identity, and
one set beside two different names is nobody's.
"""

from __future__ import annotations

import re
from collections import defaultdict

from glyphoxa_pipelines.processing.extraction.candidates import Candidate, choose_type
from glyphoxa_pipelines.processing.extraction.name_spans import Sentence, Span
from glyphoxa_pipelines.processing.extraction.resolution import (
    EntityResolver,
    name_key,
    split_descriptor,
)

_NAME_THEN_EPITHET = re.compile(r",\s+the\s+")  # "Bahamut, the Platinum Dragon"
_EPITHET_THEN_NAME = re.compile(r",\s+")  # "the Platinum Dragon, Bahamut"
_THE_BEFORE = re.compile(r"\bthe\s+$", re.I)
# what may stand before "the Y Z, X": not a list ("Vex, the ...", "and the ..."), not a
# place phrase that opens the clause ("In the Greyspine Mountains, Kraghammer ...")
_NOT_BEFORE_THE = re.compile(
    r"(?:,|\band|\bor|\b(?:in|into|at|on|from|to|of|near|under|beneath|below|above|across|"
    r"through|within|inside|outside|towards?|by|with|for|after|before|around|behind|beyond|"
    r"past|over|upon|among|between|during)|\bthe)\s+the\s+$",
    re.I,
)
# the apposition closes: a comma that starts no list item, an "of" phrase, the end
_CLOSED = re.compile(r"\s*(?:of\b|[.!?;:)]|$|,(?!\s*(?:and|or)\b)(?!\s*[A-Z]))")
_LIST_BEFORE = re.compile(r",\s*$")  # "Scanlan, Vex, the Ranger Guild": a list's item
_SETTLED = frozenset({"location", "faction", "item"})  # a person is never one of these


def _clash(a: str | None, b: str | None) -> bool:
    """A person or god beside a place, a body or a thing: two entities, not one."""
    return a is not None and b is not None and a != b and bool({a, b} & _SETTLED)


def _key(surface: str) -> str:
    return name_key(split_descriptor(surface)[2])  # as `gather_candidates` keys it


def epithet_pairs(sentences: list[Sentence], spans: list[Span]) -> list[tuple[str, str]]:
    """(name key, epithet key) for each apposition of a capitalised epithet to a name, in
    either order; the epithet is the span said with "the"."""
    by_sentence: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    for si, start, end, surface in spans:
        by_sentence[si].append((start, end, surface))
    pairs = []
    for si, found in by_sentence.items():
        text = sentences[si].text
        for (a1, b1, s1), (a2, b2, s2) in zip(found, found[1:], strict=False):
            gap, before, after = text[b1:a2], text[:a1], text[b2:]
            if not _CLOSED.match(after) or _LIST_BEFORE.search(before):
                continue
            if _NAME_THEN_EPITHET.fullmatch(gap):
                name, epithet = s1, s2
            elif (_EPITHET_THEN_NAME.fullmatch(gap) and _THE_BEFORE.search(before)
                  and not _NOT_BEFORE_THE.search(before)):
                name, epithet = s2, s1
            else:
                continue
            if not split_descriptor(epithet)[1]:  # "the Lady Kima" is a titled name
                pairs.append((_key(name), _key(epithet)))
    return pairs


def fold_epithets(
    sentences: list[Sentence],
    spans: list[Span],
    candidates: dict[str, Candidate],
    merged_into: dict[str, str],
    resolver: EntityResolver,
) -> None:
    """Fold each epithet candidate into the candidate of the one name it stands beside
    (recorded in `merged_into`, as `merge_name_parts` does)."""
    names_of: dict[str, set[str]] = defaultdict(set)
    for name, epithet in epithet_pairs(sentences, spans):
        while name in merged_into:
            name = merged_into[name]
        if name != epithet and name in candidates and epithet in candidates:
            names_of[epithet].add(name)
    for epithet, names in names_of.items():
        if len(names) != 1 or epithet in merged_into:
            continue  # beside two names: whose it is is not said
        name = next(iter(names))
        if name in merged_into or resolver.resolve(candidates[epithet].name) is not None:
            continue  # the graph knows the epithet as an entity of its own
        if _clash(choose_type(candidates[name]), choose_type(candidates[epithet])):
            continue
        candidates[name].absorb(candidates[epithet])
        merged_into[epithet] = name
        for k, target in merged_into.items():  # "Dragon", folded into the epithet before
            if target == epithet:
                merged_into[k] = name
