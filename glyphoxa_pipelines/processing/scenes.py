"""A session's story as scenes: the in-game sentences, in order, cut where the story moves.

Why: a summary that picks "central" sentences from anywhere reads as a bag of moments; a DM
retells a session scene by scene (where the party went, what they learned, whom they fought and
how it ended). This module turns stored chunks back into table lines, keeps the talk outside
the fiction aside (`table_talk`), and cuts the story where the DM moves it on (a change of
place or time, "roll initiative", the end of a break), merging scraps and splitting runs so a
session of any length gets a few scenes of comparable size. Each narrated sentence gets the
story events it signals (fight outcome, reveal, deal, decision, setting). Pure functions over
plain data.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from glyphoxa_pipelines.memory.models import Chunk
from glyphoxa_pipelines.processing.chunking import SCENE_SHIFT
from glyphoxa_pipelines.processing.table_talk import (
    ClassifiedSentence,
    TableContext,
    TableLine,
    TalkKind,
    classify_transcript,
)

_LINE = re.compile(r"^(?P<speaker>[^:\n]{1,60}):\s(?P<text>.*)$")
FIGHT_START = re.compile(r"\b(?:roll(?:s|ing)? (?:for |your )?initiative|initiative order)\b",
                         re.IGNORECASE)

EVENT_CUES: dict[str, re.Pattern[str]] = {
    "outcome": re.compile(
        r"\b(?:kill(?:s|ed|ing)?|dies|died|dead|slain|slays?|defeated|destroy(?:s|ed)|"
        r"(?:falls?|fell|drops?|dropped|crumples?|collapses?|slumps?) (?:to|unconscious|dead|"
        r"limp|lifeless|over|down|back)|crumples|collapses|flees|fled|retreats?|surrenders?|"
        r"unconscious|lifeless|explodes?|bursts? (?:into|apart)|decapitat\w+|beheads?|severs?|"
        r"last breath|goes still|stops moving|is no more)\b",
        re.IGNORECASE),
    "reveal": re.compile(
        r"\b(?:reveal\w*|you (?:learn|realize|discover|recognize|notice|find)|tells you|"
        r"explains?|it turns out|secret\w*|truth|appears to be|belong(?:s|ed) to|letter|map|"
        r"note|journal|symbol|sigil|prophecy|cult|worship\w*|god|ritual|artifact)\b",
        re.IGNORECASE),
    "deal": re.compile(
        r"\b(?:offers?|offered|deal|agree[sd]?|reward|pay(?:s|ment)?|paid|gold pieces|coins?|"
        r"in exchange|contract|bargain|promis\w+|hires?|hired|owe[sd]?|price|trade|bounty|"
        r"favor|debt)\b",
        re.IGNORECASE),
    "decision": re.compile(
        r"\b(?:decide\w*|choose|chose|plan\w*|set out|set off|make (?:your|their) way|"
        r"head(?:s|ed|ing)? (?:to|toward|towards|for|into|down|back|out)|travel\w*|"
        r"follow(?:s|ed)?|leave|left|return\w*|descend\w*|climb\w*)\b",
        re.IGNORECASE),
    "setting": re.compile(
        r"\b(?:arriv\w+|enter(?:s|ed)?|step (?:into|inside)|find yourselves|before you|"
        r"in front of you|looms?|sprawls?|city|town|village|cavern|tunnel|mine|temple|keep|"
        r"castle|camp|forest|road|gate|hall|chamber|tavern|inn|bridge|river|mountain)\b",
        re.IGNORECASE),
}


@dataclass(frozen=True, slots=True)
class StorySentence:
    order: int  # position among the session's sentences
    speaker: str
    text: str
    kind: TalkKind
    events: frozenset[str] = frozenset()


@dataclass
class Scene:
    index: int
    sentences: list[StorySentence] = field(default_factory=list)
    fight: bool = False

    @cached_property  # read once the scene is complete (balancing, picking)
    def words(self) -> int:
        return sum(len(s.text.split()) for s in self.sentences)

    @property
    def narration(self) -> list[StorySentence]:
        return [s for s in self.sentences if s.kind is TalkKind.NARRATION]


def lines_from_chunks(chunks: Sequence[Chunk], dm_names: Sequence[str] = ()) -> list[TableLine]:
    """The session's turns from its chunks (in order), overlap between chunks removed.

    Chunk lines are "Speaker: text"; a turn too long for one chunk continues in the next
    under the same label. A line equal to one of the previous chunk's lines is the overlap.
    """
    dms = {d.lower() for d in dm_names}
    out: list[TableLine] = []
    previous: set[str] = set()
    for chunk in sorted(chunks, key=lambda c: c.seq):
        current = chunk.text.split("\n")
        for raw in current:
            if not raw.strip() or raw in previous:
                continue
            m = _LINE.match(raw)
            speaker, text = (m.group("speaker"), m.group("text")) if m else ("", raw)
            role = "dm" if speaker.lower() in dms else ("player" if dms else "")
            out.append(TableLine(speaker, text, role))
        previous = set(current)
    return out


def story_sentences(
    lines: Sequence[TableLine], context: TableContext | None = None
) -> tuple[list[StorySentence], list[ClassifiedSentence]]:
    """(in-game sentences with their events, every sentence classified)."""
    classified = classify_transcript(lines, context)
    story = [
        StorySentence(i, c.speaker, c.text, c.kind, event_kinds(c.text))
        for i, c in enumerate(classified)
        if c.kind.in_game
    ]
    return story, classified


def event_kinds(text: str) -> frozenset[str]:
    """The story events a sentence signals (keys of EVENT_CUES)."""
    return frozenset(name for name, cue in EVENT_CUES.items() if cue.search(text))


def split_scenes(
    classified: Sequence[ClassifiedSentence],
    *,
    target_scenes: int = 10,
    min_share: float = 0.35,
) -> list[Scene]:
    """In-game sentences cut into about `target_scenes` scenes at the story's own breaks.

    Cuts: a DM sentence opening a new place or time, the first call for initiative of a fight,
    and the first story sentence after a long stretch of table talk (a break, a rules debate).
    Scenes under `min_share` of the average size are merged into a neighbour; scenes over
    twice the average are halved at their middle sentence.
    """
    scenes: list[Scene] = [Scene(0)]
    table_run = 0
    fight_seen_at = -10_000
    pending_fight = False
    for order, c in enumerate(classified):
        if c.kind is TalkKind.TABLE_TALK:
            table_run += 1
            if FIGHT_START.search(c.text) and order - fight_seen_at > 40:
                fight_seen_at = order
                pending_fight = True
            continue
        cut = (
            pending_fight
            or table_run >= 25
            or (c.kind is TalkKind.NARRATION and bool(SCENE_SHIFT.match(c.text)))
        )
        if cut and scenes[-1].sentences:
            scenes.append(Scene(len(scenes)))
        if pending_fight:
            scenes[-1].fight = True
            pending_fight = False
        table_run = 0
        scenes[-1].sentences.append(
            StorySentence(order, c.speaker, c.text, c.kind, event_kinds(c.text))
        )
    scenes = [s for s in scenes if s.sentences]
    if not scenes:
        return []
    return _balance(scenes, target_scenes, min_share)


def _balance(scenes: list[Scene], target: int, min_share: float) -> list[Scene]:
    total = sum(s.words for s in scenes)
    average = total / max(1, target)
    # split the long ones
    out: list[Scene] = []
    for scene in scenes:
        parts = [scene]
        while parts and parts[-1].words > 2 * average and len(parts[-1].sentences) > 4:
            last = parts.pop()
            half, acc = 0, 0
            for k, s in enumerate(last.sentences):
                acc += len(s.text.split())
                if acc >= last.words / 2:
                    half = k + 1
                    break
            parts += [Scene(0, last.sentences[:half], last.fight),
                      Scene(0, last.sentences[half:], False)]
        out += parts
    # merge the short ones into the smaller neighbour, then the smallest pairs down to target
    def merge(i: int) -> None:
        left_smaller = i > 0 and (i == len(out) - 1 or out[i - 1].words <= out[i + 1].words)
        j = i - 1 if left_smaller else i + 1
        a, b = sorted((i, j))
        out[a] = Scene(0, out[a].sentences + out[b].sentences, out[a].fight or out[b].fight)
        del out[b]

    while len(out) > 1:
        small = min(range(len(out)), key=lambda k: out[k].words)
        if out[small].words >= min_share * average and len(out) <= target:
            break
        merge(small)
    for k, scene in enumerate(out):
        scene.index = k
    return out
