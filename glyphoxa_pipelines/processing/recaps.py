"""'Previously on…' recaps read to the table at the start of the next session.

Offline (`story-recap-v4`): told in the story's terms, from the summary's scenes: the party by
their characters' names, where the session opened, what the party is after (the first point
that names a goal), the strongest middle points (those naming the most people and places), and
the last scene as the cliffhanger ("When we left them, ..."), in the third person (the DM's
"you" becomes "they"), 150-250 words so it can be read aloud in about a minute. Table lines
("NAME: ...") never reach it; facts fill in only when the story is short. Read aloud, nothing
may lean on what was left out: no point opening on he/she/it, no quote, no DM's "last time",
no "Vex, you ..." said to one player; the DM's sign-off ("We'll pick up as you ...") is kept
as the cliffhanger, told plainly. Deterministic for a given story: the phrasing is picked
from the summary's text, never from ids or hash order, so the same session reads the same
whatever it is called. With an LLM configured, `recap_llm` writes it from the same material.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from glyphoxa_pipelines.memory.models import Recap, SessionSummary

if TYPE_CHECKING:
    from glyphoxa_pipelines.providers.llm import ChatLLM

RECAP_VERSION = "story-recap-v4"  # a bump marks stored recaps stale
LLM_RECAP_VERSION = "llm-recap-v3"  # v3: last-scene material read-aloud safe

_CONNECTIVES = ["At first,", "Then", "Soon after,", "Before long,", "Later,", "And so"]
_CLOSERS = [
    "What awaits our heroes now? Let us find out.",
    "The story continues tonight.",
    "And now, the adventure resumes.",
    "Where fate leads next, only the dice can tell.",
]
# "you" right after these (or a comma, or at the start) is a subject: "they"; else "them"
_SUBJECT_BEFORE = (
    "as when if and but so that because until while where then once unless although though "
    "after before since suddenly now"
).split()
_SECOND_PERSON = [
    (re.compile(r"\byou (?:guys|all|two|both)\b", re.I), "our heroes"),
    (re.compile(r"\by'all\b", re.I), "our heroes"),
    (re.compile(r"\byourselves\b", re.I), "themselves"),
    (re.compile(r"\byours\b", re.I), "theirs"),
    (re.compile(r"\byour\b", re.I), "their"),
    (re.compile(r"\byou're\b", re.I), "they're"),
    (re.compile(r"\byou've\b", re.I), "they've"),
    (re.compile(r"\byou'll\b", re.I), "they'll"),
    (re.compile(r"^you\b", re.I), "our heroes"),
    (re.compile(r"(^|[,;:.!?]\s*|\b(?:" + "|".join(_SUBJECT_BEFORE) + r")\s+)you\b", re.I),
     r"\1they"),
]
# Any other "you" is an object after a preposition or a verb ("hands you", "looks at you",
# "thank you") and a subject otherwise ("the next morning you climb"): "them" / "they".
_PREPOSITIONS = set(
    "at to for with from about around behind beside toward towards into onto upon over under "
    "near past against among between through without within beyond of on in by".split()
)
_OBJECT_VERBS = set(
    "tell give show ask let help hand see meet offer thank warn follow join take bring send pay "
    "owe hear find make call pull push grab stop lead guide carry greet attack hit strike "
    "watch remind invite hire trust know".split()
)
# after "you", a verb that makes it the subject of a clause ("the corpses you come across")
_SUBJECT_NEXT = set("""come came see saw find found hear heard feel felt notice noticed make made
    get got go went walk walked pass passed reach reached enter entered know knew can could will
    would have had are were need needed want wanted left""".split())
_OTHER_YOU = re.compile(r"\b(\w+)(\s+)you\b|\byou\b", re.I)


def _other_you(m: re.Match[str]) -> str:
    before = m.group(1)
    if before is None:  # no word before it
        return "they"
    prev = before.lower()
    after = re.match(r"\s+(\w+)", m.string[m.end():])
    is_object = (
        prev in _PREPOSITIONS
        or prev in _OBJECT_VERBS
        or (prev.endswith(("s", "ed")) and prev not in {"is", "was", "has", "as", "this"}
            and not (after and after.group(1).lower() in _SUBJECT_NEXT))  # "corpses you come"
    )
    return f"{before}{m.group(2)}{'them' if is_object else 'they'}"


def third_person(sentence: str) -> str:
    """The DM's second-person narration retold about the party."""
    if re.match(r"^[A-Z][\w' ]{0,40}:", sentence):  # a quoted table line: keep as said
        return sentence
    parts = re.split(r"(\"[^\"]*\"?|“[^”]*”?)", sentence)  # quoted speech stays as spoken
    for i in range(0, len(parts), 2):
        for pattern, repl in _SECOND_PERSON:
            parts[i] = pattern.sub(repl, parts[i])
        parts[i] = _OTHER_YOU.sub(_other_you, parts[i])
        parts[i] = re.sub(r"([.!?]\s+)(they|our)\b", lambda m: m.group(1) + m.group(2).title(),
                          parts[i])
    out = "".join(parts)
    return out[:1].upper() + out[1:]


_DISCOURSE = re.compile(
    r"^(?:however|so|now|okay|ok|well|and|but|also|once again|all right|alright|anyway)\b,?\s+",
    re.I,
)


def _lower_first(text: str) -> str:
    """Lower-case an ordinary first word after a connective; names keep their capital."""
    from wordfreq import zipf_frequency

    text = _DISCOURSE.sub("", text) or text
    words = text.split()
    first = words[0].strip(",.'\"") if words else ""
    titled = (len(words) > 1 and words[1][:1].isupper()  # "Lady Vexmira", "Captain Hask"
              and zipf_frequency(first.lower(), "en") < 6.0
              and first.lower() not in {"both", "all", "each", "every", "with", "from"})
    acronym = first.isupper() and len(first) > 1  # "A" is a word, "NPC" is not
    if first and first[0].isupper() and not acronym and not titled and (
        zipf_frequency(first.lower(), "en") >= 4.0 or first in {"Our"}
    ):
        return text[0].lower() + text[1:]
    return text


GOAL = re.compile(
    r"\b(?:find|search\w*|seek\w*|rescue\w*|stop|destroy|track(?:ing)? down|hunt\w*|recover\w*|"
    r"retriev\w*|reward|quest|mission|task|whereabouts|looking for|bring (?:her|him|them) back|"
    r"hired|agreed to|promised)\b",
    re.IGNORECASE,
)
_TABLE_LINE = re.compile(r"^[A-Z][\w' ]{0,40}:\s")
# What a listener cannot follow out of the transcript: a sentence leaning on the one before
# ("He forged it himself"), the DM's own "last time" (the previous session, not this one), a
# quote with nobody to say it, the DM talking to one player ("Vex, you ...").
_UNSPEAKABLE = re.compile(
    r"^(?:he|she|it|its|his|her|him|they|them|their|there)\b"
    r"|^(?:last|as) (?:time|we left off)\b|^next time\b"
    r"|[\"“”]",
    re.IGNORECASE,
)
# The DM's sign-off carries the cliffhanger: "We'll pick up next game as you head up the stairs"
_PICK_UP = re.compile(
    r"^(?:and )?we(?:'ll| will) (?:pick (?:it )?up|start|begin|continue)(?: (?:the )?(?:next "
    r"(?:game|session|time|week)|there|from there))?,? (?:as|with|where|when) ", re.IGNORECASE)
_TIME_OPENER = re.compile(
    r"^(?:tonight|today|that (?:night|evening|morning)|the next (?:morning|day|night)|"
    r"the following \w+|later|soon|meanwhile|at (?:dawn|dusk|last)|(?:hours|moments|minutes|"
    r"an instant|a moment) later)\b", re.IGNORECASE)
_VOCATIVE = re.compile(r"(?:^|,\s)[A-Z][\w'’-]+, (?:[Yy]ou|[Yy]our|as you)\b")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'’]+")


def _points_by_scene(summary: SessionSummary) -> list[list[str]]:
    """The summary's key points grouped by scene (its paragraphs), table lines dropped."""
    paragraphs = [p for p in summary.summary.split("\n\n") if p.strip()]
    points = [
        p.strip() for p in summary.key_points
        if len(p.split()) >= 5 and not _TABLE_LINE.match(p) and "--" not in p
        and not _UNSPEAKABLE.search(_DISCOURSE.sub("", p.strip())) and not _VOCATIVE.search(p)
    ]
    if len(paragraphs) < 2:
        return [[p] for p in points] or ([[summary.summary]] if summary.summary else [])
    scenes: list[list[str]] = [[] for _ in paragraphs]
    k = 0
    for p in points:
        while k < len(paragraphs) - 1 and p not in paragraphs[k]:
            k += 1
        scenes[k].append(p)
    return [s for s in scenes if s]


def _join_names(names: Sequence[str]) -> str:
    names = list(dict.fromkeys(n for n in names if n))
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def recap_from_summary(
    summary: SessionSummary,
    *,
    facts: Iterable[str] = (),
    campaign_name: str = "",
    characters: Sequence[str] = (),
    min_words: int = 150,
    max_words: int = 250,
) -> Recap:
    """A spoken "Previously on..." from a session summary: the party by their characters'
    names, where the story opened, what they are after, what happened on the way, and the
    last scene as the cliffhanger, in the third person, `min_words`..`max_words` words when
    the summary has that much to tell. Deterministic for a given summary: the same story gives
    the same recap whatever ids the import minted for its campaign and session.

    `characters`: the player characters' names (e.g. `cast.infer_characters`' values or the
    graph's PCs); `facts`: fact sentences, used only when the story leaves room.
    """
    # the connectives and the closer vary between sessions for variety, but from the story
    # itself: seeded by the ids, one transcript imported twice got two different recaps
    seed = zlib.crc32("\n".join([summary.summary, *summary.key_points]).encode())
    scenes = _points_by_scene(summary)
    points = list(dict.fromkeys(p for scene in scenes for p in scene))
    last = set(scenes[-1][-2:]) if scenes else set()
    goal = next((p for p in points if GOAL.search(p) and p not in last), None)
    must = {points[0]} | last | ({goal} if goal else set()) if points else set()

    def names_in(p: str) -> int:
        return len(set(_NAME.findall(p)))

    title = f"Previously, on {campaign_name}…" if campaign_name else "Previously…"
    # one known name would read as if the rest of the party were gone
    intro = f"We return to {_join_names(characters)}." if len(set(characters)) >= 2 else ""
    closer = _CLOSERS[seed % len(_CLOSERS)]
    # title, connectives ("When we left them,") and the closer count too
    budget = max_words - len(title.split()) - len(intro.split()) - len(closer.split()) - 25
    chosen = set(must)
    used = sum(len(p.split()) for p in chosen)
    for p in sorted((p for p in points if p not in chosen), key=lambda p: -names_in(p)):
        if used + len(p.split()) > budget:
            continue
        chosen.add(p)
        used += len(p.split())
    while used > budget and len(chosen) > len(must):  # over budget on the must-haves alone
        # in the story's order, so a tie does not fall to the set's (hash-seeded) order
        drop = min((p for p in points if p in chosen and p not in must), key=names_in)
        chosen.discard(drop)
        used -= len(drop.split())
    ordered = [p for p in points if p in chosen]
    body: list[str] = []
    for i, point in enumerate(ordered):
        told = _PICK_UP.sub("", point)
        text = _finish(third_person(told[:1].upper() + told[1:]))
        if _TIME_OPENER.match(text) and point not in last:
            body.append(text)  # "The next morning they climb ...": its own transition
        elif i == 0:
            body.append(f"{_CONNECTIVES[0]} {_lower_first(text)}")
        elif point in last and point == next(p for p in ordered if p in last):
            body.append(f"When we left them, {_lower_first(text)}")
        elif point in last:
            body.append(f"And {_lower_first(text)}")
        else:
            body.append(f"{_CONNECTIVES[1 + (seed + i) % (len(_CONNECTIVES) - 2)]} "
                        f"{_lower_first(text)}")
    text_words = used + len(intro.split()) + len(closer.split())
    fact_list = [f.strip().rstrip(".") for f in facts if f and f.strip()][:3]
    facts_line = ""
    if fact_list and text_words < min_words:
        facts_line = "Along the way, they learned that " + "; that ".join(fact_list) + "."
    lines = [title, ""]
    if intro:
        lines.append(intro)
    if body:
        lines.append(" ".join(body))
    if facts_line:
        lines += ["", facts_line]
    lines += ["", closer]
    return Recap(
        session_id=summary.session_id,
        campaign_id=summary.campaign_id,
        text="\n".join(lines).strip(),
        method=RECAP_VERSION,
    )


def _finish(text: str) -> str:
    return text if text.endswith((".", "!", "?", "”", '"')) else text + "."


LLM_RECAP_SYSTEM = (
    "You are the narrator of a tabletop role-playing campaign. Write a dramatic 'Previously "
    "on…' recap (150-250 words, present tense, third person, vivid but faithful: invent no "
    "events) to be read aloud at the start of the next session. Tell it in the story's terms: "
    "the characters by name (never the players), the places, what the party is after, and end "
    "on the last scene as the cliffhanger. No game mechanics, no quotes of table talk. Answer "
    'with one JSON object: {"recap": "the text"}.'
)
MAX_LLM_RECAP_WORDS = 320  # the prompt asks for 250; a longer answer ignored it


def recap_llm(
    summary: SessionSummary,
    llm: ChatLLM,
    *,
    facts: Sequence[str] = (),
    campaign_name: str = "",
    characters: Sequence[str] = (),
) -> Recap | None:
    """LLM-written recap from the summary (the session's story, scene by scene), the party's
    characters and facts; None when the answer is unusable or far too long, so the caller
    falls back to `recap_from_summary`."""
    scenes = _points_by_scene(summary)
    material = f"Campaign: {campaign_name or 'unnamed'}\n"
    if characters:
        material += f"The party: {_join_names(characters)}\n"
    material += f"Summary:\n{summary.summary}\n"
    if summary.key_points:
        material += "Key points:\n" + "\n".join(f"- {p}" for p in summary.key_points) + "\n"
    if scenes:
        material += "Last scene (the cliffhanger):\n" + " ".join(scenes[-1]) + "\n"
    if facts:
        material += "Facts learned:\n" + "\n".join(f"- {f}" for f in facts) + "\n"
    answer = llm.complete_json(LLM_RECAP_SYSTEM, material)
    text = answer.get("recap") if answer else None
    if not isinstance(text, str) or not text.strip():
        return None
    if len(text.split()) > MAX_LLM_RECAP_WORDS:
        return None
    return Recap(
        session_id=summary.session_id,
        campaign_id=summary.campaign_id,
        text=text.strip(),
        method=LLM_RECAP_VERSION,
    )
