"""Who plays whom: the players' characters, read from how the DM talks to the table.

A DM addresses characters by name ("Grog, your sight focuses", "What do you do, Scanlan?")
and the player of that character answers, or has just spoken. Counting which speaker sits
next to each name the DM calls out gives, per name, the player behind it. Such a name is a
player character (type `player`), never an NPC, and it is also the simplest coreference the
table offers: a player's "I" is their character, and the DM's "you" is the character of the
player the DM is answering.

The speaker labels themselves (the cast's real names) are never characters: they are
excluded before this runs.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence, Set
from dataclasses import dataclass, field

from glyphoxa_pipelines.memory.models import Entity, Entry
from glyphoxa_pipelines.processing.cast import infer_characters
from glyphoxa_pipelines.processing.extraction.resolution import name_key
from glyphoxa_pipelines.processing.extraction.vocabulary import NOT_NAMES
from glyphoxa_pipelines.processing.table_talk import TableLine

_NAME = r"[A-Z][\w'’\-]+"
# "Grog, don't." / "Come on, Grog!" / "What do you do, Scanlan?": a name called out
_VOCATIVE = re.compile(
    rf"(?:^|[.!?]\s+)(?P<a>{_NAME})[,!?](?:\s|$)|,\s*(?P<b>{_NAME})\s*[.?!]+\s*$"
)
# "Clarota says, (raspy voice) \"...\"": the DM voices only NPCs
_VOICED = re.compile(
    rf"(?P<name>{_NAME})\s+(?:says|goes|asks|replies|whispers|shouts|growls|hisses)\b[^\"“]{{0,60}}[\"“]"
)
MIN_VOTES = 2
MIN_SHARE = 0.5
MAX_OWN_SHARE = 0.2  # a player seldom says their own character's name


@dataclass(frozen=True, slots=True)
class Cast:
    """The player behind each character name (name key -> speaker label), and back."""

    played_by: dict[str, str] = field(default_factory=dict)
    characters: dict[str, list[str]] = field(default_factory=dict)  # speaker -> name keys
    # characters whose player is not known: the party's own, by the company they keep
    unplaced: frozenset[str] = frozenset()

    def is_character(self, key: str) -> bool:
        return key in self.played_by

    def character_of(self, speaker: str) -> str | None:
        """The main name of the speaker's character (most voted), if known."""
        names = self.characters.get(speaker)
        return names[0] if names else None


def _common_word(key: str) -> bool:
    """"However,", "Ooh,": called out like names, but words."""
    from wordfreq import zipf_frequency

    return zipf_frequency(key, "en") >= 3.9


_INTRODUCES = re.compile(
    rf"\b(?:I am|I'm|my name is|call me)\s+(?P<name>{_NAME}(?: {_NAME})?)"
)
_CAPITALIZED = re.compile(rf"(?<![.!?]\s)(?<!^)\b{_NAME}")
MONOLOGUE_WORDS = 150


def _monologue_subject(text: str, excluded: Set[str]) -> str | None:
    """The character a player's long monologue is about (a recorded introduction): the
    name they introduce themselves as, else the name it repeats most, if it repeats."""
    if len(text.split()) < MONOLOGUE_WORDS:
        return None
    if (m := _INTRODUCES.search(text)) and name_key(m.group("name")) not in excluded:
        return name_key(m.group("name"))
    counts = Counter(
        k.split("'")[0]  # "Vax'ildan" and "Vax" are one name told two ways
        for m in _CAPITALIZED.finditer(text)
        if (k := name_key(re.sub(r"['’]s$", "", m.group(0)))) not in excluded
        and k not in NOT_NAMES
        and not _common_word(k)
    )
    if counts:
        k, n = counts.most_common(1)[0]
        if n >= 3:
            return k
    return None


def _single_speaker(entry: Entry | None) -> str | None:
    if entry is None or entry.speaker_role not in ("player", "dm") or "," in entry.speaker_name:
        return None
    return entry.speaker_name


def read_cast(entries: Sequence[Entry], excluded: Set[str]) -> Cast:
    """Character names and their players: a name called out at the table is answered by
    its player in the next turn, and that player seldom says it themselves."""
    answered: dict[str, Counter[str]] = defaultdict(Counter)
    said: dict[str, Counter[str]] = defaultdict(Counter)
    voiced_by_dm: set[str] = set()
    for i, entry in enumerate(entries):
        if entry.speaker_role == "dm":
            voiced_by_dm |= {name_key(m.group("name")) for m in _VOICED.finditer(entry.text)}
        speaker = _single_speaker(entry)
        if speaker is None:
            continue
        if entry.speaker_role == "player" and (own := _monologue_subject(entry.text, excluded)):
            answered[own][speaker] += MIN_VOTES  # "I am Tiberius Stormwind. I hail from..."
        called = {name_key(m.group("a") or m.group("b")) for m in _VOCATIVE.finditer(entry.text)}
        called = {k for k in called - excluded if k not in NOT_NAMES and not _common_word(k)}
        for k in called:
            said[k][speaker] += 1
        after = entries[i + 1] if i + 1 < len(entries) else None
        answer = _single_speaker(after)
        if answer is None or answer == speaker or after is None or after.speaker_role != "player":
            continue
        for k in called:
            answered[k][answer] += 1
    played_by: dict[str, str] = {}
    taken: set[str] = set()
    # most answered first: a player plays one character, so a second name is an NPC they
    # talk with (or a nickname the merge of name parts folds in anyway)
    for k, counter in sorted(answered.items(), key=lambda kv: -kv[1].most_common(1)[0][1]):
        player, n = counter.most_common(1)[0]
        if k in voiced_by_dm or player in taken:
            continue
        own = said[k][player]
        if (
            n >= MIN_VOTES
            and n >= MIN_SHARE * sum(counter.values())
            and own <= MAX_OWN_SHARE * sum(said[k].values())
        ):
            played_by[k] = player
            taken.add(player)
    by_player: dict[str, list[str]] = defaultdict(list)
    for k in sorted(played_by, key=lambda k: -answered[k][played_by[k]]):
        by_player[played_by[k]].append(k)
    # the story's reading of who plays whom (`processing/cast`: self-introductions, the DM
    # calling on the player who just spoke, ranked by PMI) fills in the players nobody
    # answered for: on CRD3's C1E003 it adds Grog and Vex'ahlia to Tiberius, Scanlan, Keyleth
    lines = [TableLine(e.speaker_name, e.text, e.speaker_role) for e in entries]
    for player, name in infer_characters(lines).items():
        k = name_key(name)
        if player in by_player or k in played_by or k in voiced_by_dm or k in excluded:
            continue
        played_by[k] = player
        by_player[player].append(k)
    silent = _players_without_character(entries, set(by_player))
    voiced = voiced_by_dm | {
        name_key(m.group("name")) for e in entries if e.speaker_role == "dm"
        for m in _VOICED_LATER.finditer(e.text)
    }
    unplaced = _companions(entries, played_by, excluded | voiced, silent)
    return Cast(played_by, dict(by_player), unplaced)


# "Tiberius and Vax are going over", "Grog, Vax, you guys": named in one breath with the
# party's characters
_TOGETHER = re.compile(rf"(?P<a>{_NAME}),? and (?P<b>{_NAME})\b|(?P<c>{_NAME}), (?P<d>{_NAME}),")
MIN_COMPANY = 2
# a player who speaks at least this share of the busiest player's turns sits at the table
# (CRD3's C1E004 has guests with 30-70 lines in a break segment, the cast 228-526)
_ACTIVE_SHARE = 0.15
# "Kima, with a look of absolute death in her face, grabs him ... and says, \"Listen\"": the
# DM voices this one, later in the sentence than `_VOICED` looks
_VOICED_LATER = re.compile(  # a lookahead: "However, Kima, ..." is tried at both names
    rf"(?=\b(?P<name>{_NAME})\b[^.!?\"“]{{0,120}}\b(?:says|said|asks|replies|whispers|shouts|"
    rf"growls|hisses|yells|continues|responds)\b[^\"“.!?]{{0,40}}[\"“])"
)


def _players_without_character(entries: Sequence[Entry], placed: Set[str]) -> int:
    """How many players at the table this session nobody's reading gave a character."""
    turns = Counter(s for e in entries if e.speaker_role == "player"
                    and (s := _single_speaker(e)) is not None)
    top = max(turns.values(), default=0)
    return sum(1 for s, n in turns.items() if n >= _ACTIVE_SHARE * top and s not in placed)


def _companions(
    entries: Sequence[Entry], played_by: dict[str, str], excluded: Set[str], seats: int
) -> frozenset[str]:
    """Names the table says together with known characters at least `MIN_COMPANY` times,
    at most one per player who has no character yet (`seats`), most often said first.

    On CRD3's C1E003 nobody answers to "Vax" or "Percy" and neither introduces himself,
    but the table says "Tiberius and Vax" three times and "Percy and Grog", "with Percy and
    Tiberius"; an NPC travelling with the party (Kima, Clarota) is named with them too, so
    the count is capped by the seats left, and a name the DM voices never takes one."""
    if seats <= 0 or not played_by:
        return frozenset()
    short = set(played_by) | {k.split("'")[0].split()[0] for k in played_by}

    def known(k: str) -> bool:  # "Vex'ahlia" and "Grog Strongjaw" are "Vex" and "Grog"
        return k in short or k.split("'")[0].split()[0] in short

    company: Counter[str] = Counter()
    for e in entries:
        if e.speaker_role not in ("dm", "player"):
            continue
        for m in _TOGETHER.finditer(e.text):
            a, b = (m.group("a"), m.group("b")) if m.group("a") else (m.group("c"), m.group("d"))
            ka, kb = name_key(a), name_key(b)
            for k, other in ((ka, kb), (kb, ka)):
                if known(other) and not known(k) and k not in excluded:
                    company[k] += 1
    ranked = [k for k, n in company.most_common() if n >= MIN_COMPANY
              and k not in NOT_NAMES and not _common_word(k)]
    return frozenset(ranked[:seats])


REPLY_REACH = 3  # turns back a DM's reply may answer, as far as the DM's own last turn
# "I walk up and try to help Keyleth": a player declaring their own action, which the DM rules on
_DECLARES = re.compile(r"(?:^|[.!?,]\s*)I(?:['’](?:ll|m|d))?\s+[a-z]")


def player_entities(entities: dict[str, Entity]) -> dict[str, str]:
    """A player character's name or alias (`name_key`) → its entity id: how a character the
    cast reads off the table (`Cast.character_of`) is found in the graph. The first entity
    keeps a name two of them share."""
    by_key: dict[str, str] = {}
    for e in entities.values():
        if e.type == "player":
            for name in [e.name, *e.aliases]:
                by_key.setdefault(name_key(name), e.id)
    return by_key


def repliers(entries: Sequence[Entry], index: int, cast: Cast) -> list[str | None]:
    """The characters of the player turns since the DM last spoke, nearest first: whom the
    DM's turn `index` may be answering. None stands for a turn of several voices or of a
    player with no known character: someone spoke, but not one known character. When the
    nearest turn declares its player's own action, the DM rules on that one; the talk
    before it is no addressee."""
    out: list[str | None] = []
    for j in range(index - 1, max(-1, index - 1 - REPLY_REACH), -1):
        if entries[j].speaker_role == "dm":
            break
        if entries[j].speaker_role == "player":
            speaker = _single_speaker(entries[j])
            out.append(cast.character_of(speaker) if speaker else None)
            if len(out) == 1 and speaker and _DECLARES.search(entries[j].text):
                break
    return out


def declared_by(entries: Sequence[Entry], index: int, cast: Cast) -> str | None:
    """The character whose player's turn, right before the DM's turn `index`, declared their
    own action ("I draw back the blade and I lop it off"): the DM's answer narrates it."""
    if index < 1 or entries[index - 1].speaker_role != "player":
        return None
    speaker = _single_speaker(entries[index - 1])
    if speaker is None or not _DECLARES.search(entries[index - 1].text):
        return None
    return cast.character_of(speaker)


REACTION_WORDS = 3  # "Barely.", "Yeah! Trinket!": a player's aside, not a turn the DM answers


def previous_dm_turn(entries: Sequence[Entry], index: int) -> int | None:
    """The DM's turn before turn `index`, when only players' short reactions lie between
    (`REACTION_WORDS` words at most, no question, no declared action): the DM is still
    telling the same thing to the same people ("you guys managed to survive." "Barely."
    "... where you had met Clarota")."""
    for j in range(index - 1, max(-1, index - 1 - REPLY_REACH), -1):
        if entries[j].speaker_role == "dm":
            return j
        text = entries[j].text
        if (len(text.split()) > REACTION_WORDS or "?" in text or _DECLARES.search(text)):
            return None
    return None
