"""The sentences extraction reads: the in-game parts of a session, nothing said about the table.

`processing/table_talk` classifies every sentence as DM narration, in-character speech or
table talk (rules, dice, breaks, sponsors, scheduling, the cast); extraction keeps the first
two. On top of it, a few cues that matter only for names: thanks and plugs ("thank you David
Norris", "check out Dwarven Forge's kickstarter") stay out even inside narration, because
one such line is enough to make a donor an NPC.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence

from glyphoxa_pipelines.memory.models import Entry
from glyphoxa_pipelines.processing.extraction.candidates import MONOLOGUE_WORDS
from glyphoxa_pipelines.processing.extraction.name_spans import Sentence, session_sentences
from glyphoxa_pipelines.processing.table_talk import (
    TableContext,
    TableLine,
    classify_line,
    classify_transcript,
)

_PLUG = re.compile(
    r"\b(?:thanks?|thank you|shout[- ]?out|sponsor\w*|kickstarter|patreon|subscrib\w*|"
    r"giveaway|merch\w*|t-shirts?|launch(?:ed|es)?|check (?:it|them) out|voic(?:e|es|ed) "
    r"(?:in|for)|the chat|chatroom|twitch|youtube|website|episodes?|stream\w*|podcast|"
    r"tabletop day|fan art|signed|autograph\w*|the show|our show|next week|thursday)\b",
    re.I,
)


_RECAP = re.compile(r"\bthe\s+party\s+(?:has|had|was|were|then|managed?|made)\b", re.I)


def recap_turn(entry: Entry) -> bool:
    """The DM's recap of the party's story: a long DM turn that says what "the party has /
    had / was / were / then / managed / made" done ("So the party was hired to go into
    Kraghammer ...", "The party managed to make their way to the city")."""
    return (entry.speaker_role == "dm" and len(entry.text.split()) >= MONOLOGUE_WORDS
            and _RECAP.search(entry.text) is not None)


def _normalize(text: str) -> str:
    return re.sub(r"\W+", " ", text).strip().lower()


def story_sentences(entries: Sequence[Entry], world_names: Iterable[str] = ()) -> list[Sentence]:
    """The session's in-game sentences (quoted speech split from narration, as
    `session_sentences` does), judged by the table-talk classifier and the plug cues."""
    lines = [TableLine(e.speaker_name, e.text, e.speaker_role) for e in entries]
    context = TableContext.from_lines(lines, world_names=world_names)
    in_game: dict[int, list[str]] = defaultdict(list)
    for c in classify_transcript(lines, context):
        if c.kind.in_game and not _PLUG.search(c.text):
            in_game[c.line_index].append(_normalize(c.text))
    for i, line in enumerate(lines):
        # a character's recorded introduction is often played before the DM opens the
        # story (the classifier's pre-show); it is the story all the same, sentence by
        # sentence. So is the DM's recap of the party's story ("So the party was hired to
        # ..."), which the classifier can take for the pre-show it closes, long or short: a
        # two-sentence recap among the show's opening words is the story all the same
        long_turn = len(line.text.split()) >= MONOLOGUE_WORDS
        if (long_turn and line.role == "player") or (
                line.role == "dm" and _RECAP.search(line.text)):
            in_game[i] = [_normalize(t) for t, kind in classify_line(line, context) if kind.in_game]
    index_of = {id(e): i for i, e in enumerate(entries)}
    out = []
    for s in session_sentences(entries):
        kept = in_game.get(index_of[id(s.entry)], [])
        text = _normalize(s.text)
        if text and any(text in k or k in text for k in kept) and not _PLUG.search(s.text):
            out.append(s)
    return out
