"""In-game vs table talk: which sentences of a session belong to the story.

A game table mixes three registers: the DM narrating the world, players (and the DM voicing
NPCs) speaking or acting in character, and everything outside the fiction (rules and dice,
initiative and turn order, breaks, sponsors, scheduling, tech, the cast introducing
themselves). Summaries, recaps and extraction must only see the first two: a sponsor plug or
"I rolled a natural 20" is not something an NPC remembers.

The classifier is a pure function of the line (speaker, role, text), cue patterns, and the
campaign's names: in-game names (characters, places, NPCs) pull a sentence into the story; the
cast's own names (the speaker labels of a real-play transcript) push it out.
`classify_transcript` adds what a single line cannot know: the pre-show before the DM starts
the story, a break between "let's take a break" and "welcome back", and the sign-off.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from glyphoxa_pipelines.processing.chunking import split_sentences


class TalkKind(StrEnum):
    NARRATION = "narration"  # the DM describing the world
    IN_CHARACTER = "in_character"  # a character (PC or DM-voiced NPC) speaking or acting
    TABLE_TALK = "table_talk"  # outside the fiction

    @property
    def in_game(self) -> bool:
        return self is not TalkKind.TABLE_TALK


@dataclass(frozen=True, slots=True)
class TableLine:
    """One turn at the table: who spoke, in which role ("dm", "player", "npc", "system" or
    "" when unknown), and what was said."""

    speaker: str
    text: str
    role: str = ""


@dataclass(frozen=True, slots=True)
class ClassifiedSentence:
    line_index: int  # index of the TableLine it came from
    speaker: str
    text: str
    kind: TalkKind


@dataclass(frozen=True, slots=True)
class TableContext:
    """What the classifier knows about the table. Names are compared case-insensitively.

    `dm_speakers`: speaker labels of the DM; `cast`: the people at the table (speaker labels
    and their real names), whose mention marks talk outside the fiction; `world_names`: the
    campaign's in-game names (characters, places, NPCs), whose mention marks the story.
    """

    dm_speakers: frozenset[str] = frozenset()
    cast: frozenset[str] = frozenset()
    world_names: frozenset[str] = frozenset()
    _cast_re: re.Pattern[str] | None = field(default=None, compare=False, repr=False)
    _world_re: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def build(
        cls,
        *,
        dm_speakers: Iterable[str] = (),
        cast: Iterable[str] = (),
        world_names: Iterable[str] = (),
    ) -> TableContext:
        dms = frozenset(d.strip().lower() for d in dm_speakers if d.strip())
        cast_set = frozenset(c.strip().lower() for c in cast if c.strip()) | dms
        world = frozenset(w.strip().lower() for w in world_names if len(w.strip()) >= 2)
        cast_set = cast_set - world  # a name that is also in the world is the world's
        return cls(dms, cast_set, world, _names_re(cast_set), _names_re(world))

    @classmethod
    def from_lines(
        cls,
        lines: Sequence[TableLine],
        *,
        dm_speakers: Iterable[str] = (),
        world_names: Iterable[str] = (),
        extra_cast: Iterable[str] = (),
    ) -> TableContext:
        """Context for a transcript: the DM is whoever has role "dm" (or `dm_speakers`, or the
        most talkative speaker), and every other speaker label (split on commas, for
        "LAURA, SAM") is cast."""
        dms = {d.lower() for d in dm_speakers} | {
            ln.speaker.lower() for ln in lines if ln.role == "dm" and ln.speaker
        }
        if not dms:
            dms = guess_dm(lines)
        speakers = {
            part.strip()
            for ln in lines
            if ln.role in ("", "dm", "player")
            for part in ln.speaker.split(",")
            if part.strip()
        }
        speakers -= {"ALL", "All", "all", "Everyone", "EVERYONE"}
        return cls.build(dm_speakers=dms, cast=speakers | set(extra_cast), world_names=world_names)

    def is_dm(self, speaker: str, role: str = "") -> bool:
        return role == "dm" or speaker.strip().lower() in self.dm_speakers

    def mentions_cast(self, text: str) -> bool:
        return bool(self._cast_re and self._cast_re.search(text))

    def mentions_world(self, text: str) -> bool:
        return bool(self._world_re and self._world_re.search(text))


def _names_re(names: frozenset[str]) -> re.Pattern[str] | None:
    if not names:
        return None
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![\w'’])(?:{alternatives})(?![\w’]|'\w\w)", re.IGNORECASE)


def guess_dm(lines: Sequence[TableLine]) -> set[str]:
    """The speaker labelled DM/GM, else the one who says the most words."""
    words: dict[str, int] = {}
    for ln in lines:
        words[ln.speaker] = words.get(ln.speaker, 0) + len(ln.text.split())
    labelled = {s.lower() for s in words if s.lower() in {"dm", "gm", "dungeon master"}}
    if labelled or not words:
        return labelled
    return {max(words, key=lambda s: words[s]).lower()}


# ----------------------------------------------------------------------------------- cues

_N = (
    r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty)"
)
_SKILL = (
    r"(?:perception|stealth|insight|investigation|persuasion|deception|intimidation|athletics|"
    r"acrobatics|arcana|history|nature|religion|survival|medicine|sleight of hand|"
    r"animal handling|performance|constitution|dexterity|strength|wisdom|charisma|intelligence|"
    r"ability|skill|attack)"
)
# Mechanics: dice, checks, combat bookkeeping. One hit puts a sentence outside the fiction.
_RULES = (
    r"rolls?|rolled|rolling|re-?roll\w*|d\d+|dice|natural " + _N,
    r"nat ?" + _N + r"|crit(?:s|ted)?|critical (?:hit|fail\w*)|initiative|hit points?|hp",
    r"armor class|ac|saving throws?|saves? (?:dc|against)|dc ?\d+|spell slots?|cantrips?",
    r"(?:first|second|third|fourth|fifth|\d+(?:st|nd|rd|th))[- ]level(?: spell| slot)?",
    r"bonus action|(?:use|using|my|your|his|her|a|as a) reaction|modifier|proficien\w+",
    r"(?:at|with|have|has|gets?|roll with|on) (?:dis)?advantage|disadvantage",
    _SKILL + r" (?:check|checks|roll|rolls|save|saves|saving throw)",
    r"to hit\b(?! (?:you|him|her|them|it|the|me|us))|attack rolls?",
    r"points? of (?:\w+ )?damage|damage (?:roll|dice)",
    r"(?:" + _N + r"|that|the|your|much|of|no|extra|double|half)(?: \w+)? damage",
    r"plus " + _N + r"|minus " + _N + r"|" + _N + r" (?:plus|minus)",
    r"my turn|your turn|whose turn|next turn|end (?:of )?(?:my|your|his|her|the) turn",
    r"turn order|top of the round|(?:this|next|the) round|concentration",
    r"spell ?book|character sheet|level(?:ed|ing)? up|experience points|xp|multiclass\w*",
    r"the rules?|rules (?:say|as written)|rulebook|player'?s handbook|homebrew",
    r"(?:5th|fifth) edition|pathfinder|d&d|dungeons (?:&|and) dragons|hit dice",
    r"short rest|long rest|inspiration die|investigat\w* check",
    r"(?:make|roll|give me|go ahead and roll) (?:an? |your )?(?:\w+ )?(?:check|save|saving throw)",
)
RULES = re.compile(r"\b(?:" + "|".join(_RULES) + r")\b", re.IGNORECASE)
# The show and the people around it: breaks, sponsors, scheduling, tech, the audience.
_SHOW = (
    r"(?:a|the|quick|short|little|our|\w+-minute) break|break time|bathroom|snacks?|pizza",
    r"(?:be )?right back|welcome back|sponsor\w*|brought to you by|twitch|livestream",
    r"stream(?:s|ed|ing)?|chat ?room|the chat|subscrib\w*|patreon|youtube|website|merch\w*",
    r"t-?shirts?|giveaway|discount|promo code|donat\w+|charity|fan ?art|twitter|tweet\w*",
    r"hashtag|instagram|geek (?:&|and) sundry|wyrmwood|loot ?crate|d&d beyond|audible",
    r"episodes?|the show|next week|last week|this week|next session|thursday|schedul\w*",
    r"audio|mic|microphone|camera|headphones?|internet|wi-?fi|lag|discord",
    r"technical difficulties|voice actors?|dungeon master|game master|the game|players?",
    r"character(?:'s)? (?:sheet|backstory|creation)|my character|your character",
    r"critical role|everyone at home|folks at home|guys at home|the audience",
)
SHOW = re.compile(r"\b(?:" + "|".join(_SHOW) + r")\b", re.IGNORECASE)
FILLER = re.compile(
    r"^(?:(?:ok(?:ay)?|yeah|yep|yes|no|nope|oh|ah|uh|um|hmm|wow|whoa|nice|cool|sure|right|"
    r"all right|alright|great|damn|god|oh my god|what|huh|ha|haha|dude|man|guys|thanks|"
    r"thank you|sorry|awesome|perfect|good|fine|wait|hold on|well|so|and|but|i mean|i don't "
    r"know|maybe|totally|exactly|true|same|me too|oh no|oh yeah|oh man|yes|please)[\s,.!?-]*)+$",
    re.IGNORECASE,
)
# Stage directions in transcripts: "(laughter)", "[dice clatter]".
STAGE = re.compile(r"^[\s(\[]*(?:laugh\w*|cheer\w*|groan\w*|applause|sigh\w*|music|"
                   r"dice\w*|[a-z ]{1,30})[)\]]\s*$", re.IGNORECASE)
_NUMBERISH = re.compile(r"^[\W\d]*(?:" + _N + r"|\d+)(?:[\W\d]|" + _N + r")*$", re.IGNORECASE)
_PARENTHETICAL = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_DIGITS = re.compile(r"\b\d+\b")
_QUOTED = re.compile(r"^[\"“'‘]")
_SECOND_PERSON = re.compile(r"\b(?:you|your|you're|you've|you'll|y'all)\b", re.IGNORECASE)
_DESCRIPTIVE = re.compile(
    r"\b(?:you (?:see|notice|hear|feel|find|watch|look|arrive|enter|step|make your way|"
    r"continue|reach|spot|smell|glance)|as you|before you|in front of you|around you|the "
    r"(?:room|door|chamber|hall|city|streets?|tunnel|cavern|air|ground|walls?|floor|sky|"
    r"guards?|creature|figure|dwarf|elf|man|woman)|there (?:is|are|was|were))\b",
    re.IGNORECASE,
)
# Questions the DM asks the players about their turn ("What do you do?") drive the game but
# carry no story; prompts addressed to the table are table talk.
_DM_PROMPT = re.compile(
    r"^(?:what (?:do|does|would|are) (?:you|he|she|they)|what's (?:your|the)|who(?:'s| is) "
    r"(?:next|going|doing)|anyone else|anybody else|does (?:anyone|anybody)|do you (?:want|"
    r"still)|are you (?:sure|going)|how (?:much|many)|go (?:ahead|for it)|you (?:can|may) "
    r"(?:do|try|use|make)|let me (?:see|check|look)|hold on|one second|just a sec)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"^(?:i|i'm|i'll|i've|i'd|we|we're|we'll|we've|let's|my|our)\b",
                           re.IGNORECASE)


def classify_sentence(
    sentence: str, speaker: str, context: TableContext, role: str = ""
) -> TalkKind:
    """One sentence of one speaker: narration, in character, or table talk."""
    text = _PARENTHETICAL.sub(" ", sentence).strip()
    if not text or role == "system":
        return TalkKind.TABLE_TALK
    if STAGE.match(text) or FILLER.match(text) or _NUMBERISH.match(text):
        return TalkKind.TABLE_TALK
    if SHOW.search(text) or RULES.search(text):
        return TalkKind.TABLE_TALK
    if _DIGITS.search(text) and len(text.split()) <= 6:
        return TalkKind.TABLE_TALK  # "Okay, still 14." - a roll's result
    world = context.mentions_world(text)
    if context.mentions_cast(text) and not world:
        return TalkKind.TABLE_TALK
    if role == "npc":
        return TalkKind.IN_CHARACTER
    if context.is_dm(speaker, role):
        if _DM_PROMPT.match(text) and not world:
            return TalkKind.TABLE_TALK
        if _QUOTED.match(text):
            return TalkKind.IN_CHARACTER
        if _FIRST_PERSON.match(text) and not _DESCRIPTIVE.search(text):
            return TalkKind.IN_CHARACTER  # an NPC's voice (table asides were caught above)
        return TalkKind.NARRATION
    if len(text.split()) < 3 and not world:
        return TalkKind.TABLE_TALK  # reactions at the table ("Oh no.", "Nice!")
    return TalkKind.IN_CHARACTER


def classify_line(line: TableLine, context: TableContext) -> list[tuple[str, TalkKind]]:
    """A turn split into sentences, each with its kind (no transcript-level state)."""
    return [
        (s, classify_sentence(s, line.speaker, context, line.role))
        for s in split_sentences(" ".join(line.text.split()))
    ]


# Transcript-level state: where the story starts, pauses, and stops.
STORY_START = re.compile(
    r"\b(?:last (?:time )?we left off|when we last left|previously(?: on)?|where we (?:left "
    r"off|begin)|let's (?:jump|dive|get) (?:on |right )?in(?:to it)?|let's (?:begin|start "
    r"(?:the|our) (?:game|session|adventure))|and so we begin|we (?:pick up|open) (?:where|"
    r"with|on))\b",
    re.IGNORECASE,
)
BREAK_START = re.compile(
    r"\b(?:(?:take|have|go to|going to|time for) (?:a |our )?(?:quick |short |little |"
    r"\w+-minute )?break|(?:we'll|we will) be (?:right )?back|see you (?:guys )?(?:in a few|"
    r"after the break|shortly))\b",
    re.IGNORECASE,
)
BREAK_END = re.compile(r"\b(?:welcome back|and we're back|we are back|back from (?:the )?break)\b",
                       re.IGNORECASE)
SIGN_OFF = re.compile(
    r"\b(?:(?:we'll|we will|going to|gonna|let's) (?:stop|end|leave it|call it|pick (?:it|this)"
    r" up)|that's (?:where|it for) (?:we'll|tonight|the night|this)|see you (?:guys )?next "
    r"(?:week|time|session)|good ?night,? everyone|thank you (?:all )?for watching)\b",
    re.IGNORECASE,
)
MAX_PRESHOW_SHARE = 0.25  # a story start later than this is a recap inside play, not the start
MAX_BREAK_LINES = 120  # a "break" with no "welcome back" in sight was only talk of one


def table_spans(lines: Sequence[TableLine], context: TableContext) -> list[bool]:
    """Per line: True when it falls in the pre-show, a break, or after the sign-off."""
    n = len(lines)
    out = [False] * n
    dm_lines = [i for i, ln in enumerate(lines) if context.is_dm(ln.speaker, ln.role)]
    start = next(
        (i for i in dm_lines if i <= n * MAX_PRESHOW_SHARE and STORY_START.search(lines[i].text)),
        None,
    )
    if start is not None:
        for i in range(start):
            out[i] = True
    for i in dm_lines:
        if not BREAK_START.search(lines[i].text):
            continue
        end = next(
            (j for j in range(i + 1, min(n, i + MAX_BREAK_LINES))
             if context.is_dm(lines[j].speaker, lines[j].role) and BREAK_END.search(lines[j].text)),
            None,
        )
        if end is not None:
            for j in range(i + 1, end):
                out[j] = True
    tail = next(
        (i for i in reversed(dm_lines) if i >= n * 0.9 and SIGN_OFF.search(lines[i].text)), None
    )
    if tail is not None:
        for j in range(tail + 1, n):
            out[j] = True
    return out


def classify_transcript(
    lines: Sequence[TableLine], context: TableContext | None = None
) -> list[ClassifiedSentence]:
    """Every sentence of a session with its kind, in order. The pre-show (before the DM's
    "last we left off"), breaks and the talk after the sign-off are table talk whatever they
    say; the rest is classified sentence by sentence."""
    context = context or TableContext.from_lines(lines)
    spans = table_spans(lines, context)
    out: list[ClassifiedSentence] = []
    for i, line in enumerate(lines):
        for sentence, kind in classify_line(line, context):
            out.append(
                ClassifiedSentence(i, line.speaker, sentence, TalkKind.TABLE_TALK if spans[i]
                                   else kind)
            )
    return out


def in_game_sentences(
    lines: Sequence[TableLine], context: TableContext | None = None
) -> list[ClassifiedSentence]:
    """Only the story: narration and in-character sentences, in order."""
    return [s for s in classify_transcript(lines, context) if s.kind.in_game]
