"""Who plays whom: a real-play transcript's speakers mapped to their characters.

Why: a real-play transcript is labelled by the people at the table (CRD3: "LAURA"), while the
story is about their characters ("Vex'ahlia"). A recap that says "Travis declared" tells a
player nothing about the world; one that says "Grog" does. Where no one told us, the table
tells us: players introduce themselves ("I'm playing Vex'ahlia", "my character is Scanlan"),
and the DM calls on a player by the character's name ("Grog, what do you do?") right before or
after that player speaks. Votes from both are counted, and a player gets a character only
when one name clearly leads; no guess is better than a wrong name.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from functools import lru_cache

from glyphoxa_pipelines.processing.table_talk import TableContext, TableLine

_INTRO = re.compile(
    r"\b(?i:i(?:'m| am) playing|i play|my character(?:'s| is)|playing as|i(?:'m| am)) "
    r"(?P<name>[A-Z][\w'’]+(?: [A-Z][\w'’]+)?)",
)
# The DM calling on the player who just spoke by the character's name: "Grog, you ..."
_VOCATIVE = re.compile(r"^\W*(?P<name>[A-Z][\w'’]+)(?=[,?!])")
COMMON_ZIPF = 4.0  # a vocative more common than this in English is a word ("Okay,"), not a name
MIN_VOTES = 5
MIN_PMI = 0.5
MIN_DM_MENTIONS = 3


@lru_cache(maxsize=4096)
def _rare(word: str) -> bool:
    from wordfreq import zipf_frequency

    return zipf_frequency(word.lower(), "en") < COMMON_ZIPF


def infer_characters(
    lines: Sequence[TableLine], context: TableContext | None = None
) -> dict[str, str]:
    """player speaker label -> character name, for the players the transcript makes clear."""
    context = context or TableContext.from_lines(lines)
    votes: dict[str, Counter[str]] = defaultdict(Counter)
    intros: dict[str, Counter[str]] = defaultdict(Counter)
    for i, line in enumerate(lines):
        speaker = line.speaker.strip()
        if not speaker or "," in speaker:
            continue
        if not context.is_dm(speaker, line.role):
            for m in _INTRO.finditer(line.text):
                name = m.group("name").split()[0].strip("'’")
                if _rare(name) and not context.mentions_cast(name):
                    intros[speaker][name] += 1
            continue
        if i == 0:
            continue
        other = lines[i - 1].speaker.strip()
        if not other or "," in other or context.is_dm(other, lines[i - 1].role):
            continue
        m = _VOCATIVE.match(line.text)
        name = m.group("name").strip("'’").removesuffix("'s") if m else ""
        if name and _rare(name) and not context.mentions_cast(name):
            votes[other][name] += 1
    # A name the DM says after everyone (the party's tank) is no sign of whose it is: rank
    # each player's names by count x pointwise mutual information.
    total = sum(sum(c.values()) for c in votes.values())
    per_name: Counter[str] = Counter()
    for counts in votes.values():
        per_name.update(counts)
    dm_text = " ".join(ln.text for ln in lines if context.is_dm(ln.speaker, ln.role))

    def in_story(name: str) -> bool:  # a costume or a joke name is not a character
        short = re.escape(re.split(r"['’]", name)[0])  # "Vex'ahlia" is "Vex" to the DM
        return len(re.findall(rf"\b{short}\b", dm_text)) >= MIN_DM_MENTIONS

    claims: list[tuple[float, str, str]] = []
    for player, counts in votes.items():
        n_player = sum(counts.values())
        for name, n in counts.items():
            pmi = math.log(n * total / (n_player * per_name[name]))
            if n >= MIN_VOTES and pmi > MIN_PMI and in_story(name):
                claims.append((n * pmi, player, name))
    out: dict[str, str] = {}
    taken: set[str] = set()
    for player, counts in intros.items():  # a player's own word beats any count of ours
        name = counts.most_common(1)[0][0]
        if name not in taken and in_story(name):
            out[player] = name
            taken.add(name)
    for _, player, name in sorted(claims, reverse=True):  # one character per player
        if name not in taken and player not in out:
            out[player] = name
            taken.add(name)
    return out
