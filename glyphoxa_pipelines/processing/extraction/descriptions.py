"""Which named entity "the castle" or "the halfling" stands for: the one the same turn described so.

Narration names a thing once with its description and then goes on with the description alone:
"Percy was born ... in the ancient castle of Whitestone. ... the Briarwoods violently took
control of the castle". A reader joins the two because the turn said which castle it meant.
The rule is that reader's, kept narrow: inside one narrated turn (the DM's, or a player's
recorded monologue), a noun learnt from a description of exactly one named entity earlier in
the turn ("the castle of Whitestone", "a halfling named Kima", "Kima, the halfling paladin",
"the goddess Sarenrae") stands for that entity when a later sentence says "the / this / that"
noun. The noun must be one of the vocabulary's type nouns and fit the entity's type (a castle
is a place). A noun the turn used for two entities means neither; a new turn starts with none.
Quoted speech is skipped. Facts read through it carry a coreference penalty (review).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction.candidates import narrated
from glyphoxa_pipelines.processing.extraction.name_spans import Sentence
from glyphoxa_pipelines.processing.extraction.vocabulary import NOUN_TYPES

# "the ancient castle of Whitestone", "a paladin named Kima", "the goddess Sarenrae": the
# description right before the name
_BEFORE = re.compile(
    r"\b(?i:the|a|an)\s+(?P<desc>(?:[a-z'-]+\s+){0,3}?[a-z-]+)"
    r"(?:\s+(?:of|named|called|known\s+as)(?:\s+the)?|,)?\s+$"
)
# "Kima, the halfling paladin of much renown": the description right after it, to its end
_AFTER = re.compile(r"^\s*,\s+(?i:the|a|an)\s+(?P<desc>(?:[a-z'-]+\s+){0,3}[a-z-]+)")


def _type_of(noun: str) -> str | None:
    return next((kind for nouns, kind in NOUN_TYPES if noun in nouns), None)


def _nouns(desc: str, entity: Entity) -> set[str]:
    """The description's type nouns that fit the entity ("halfling", "paladin" for a person),
    up to an "of" that starts another thing ("paladin of much renown")."""
    head = desc.split(" of ")[0].split()
    return {w for w in head if _type_of(w) == entity.type}


def _learnt(text: str, spans: Sequence[tuple[int, int, str]],
            entities: dict[str, Entity]) -> list[tuple[str, str]]:
    """(noun, entity id) pairs the sentence's descriptions of its named entities teach."""
    out = []
    for a, b, eid in spans:
        for m in (_BEFORE.search(text[:a]), _AFTER.match(text[b:])):
            if m is not None:
                out += [(noun, eid) for noun in _nouns(m.group("desc"), entities[eid])]
    return out


def description_antecedents(
    sentences: Sequence[Sentence],
    spans: Sequence[Sequence[tuple[int, int, str]]],
    entities: dict[str, Entity],
) -> list[tuple[tuple[str, str], ...]]:
    """Per sentence, the (noun, entity id) pairs its "the NOUN" may stand for (only nouns the
    sentence says), learnt from the sentences before it in the
    same narrated turn. `spans` parallel `sentences`."""
    out: list[tuple[tuple[str, str], ...]] = []
    learnt: dict[str, str | None] = {}
    entry = None
    for s, mentions in zip(sentences, spans, strict=True):
        if s.entry is not entry:
            entry, learnt = s.entry, {}
        if s.quoted or not narrated(s.entry):
            out.append(())
            continue
        # the parse checks the article (`svo`); here only whether the noun is said at all
        out.append(tuple((noun, eid) for noun, eid in learnt.items() if eid is not None
                         and re.search(rf"\b{re.escape(noun)}\b", s.text, re.I)))
        for noun, eid in _learnt(s.text, mentions, entities):
            learnt[noun] = eid if learnt.get(noun, eid) == eid else None
    return out
