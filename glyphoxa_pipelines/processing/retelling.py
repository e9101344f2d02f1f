"""A player's first-person declaration retold as the character's deed.

Why: at a real-play table the characters' decisions are spoken by their players in the first
person ("I drag her to the edge of the cliff"), and a story summary tells them in the third
("Vax'ildan drags her to the edge of the cliff"). Only what can be retold safely is: one "I"
at the start followed by a plain verb, no "we", no "you" (speech to someone, not a deed), no
second clause about the speaker. Anything else returns None and stays out of the story.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_NOT_DEEDS = set(
    """think guess mean feel know believe hope wish wonder suppose bet love like hate need
    don't didn't can't won't couldn't wouldn't shouldn't haven't hadn't wasn't am was were
    have had would could should can will shall may might must do did just really also still
    actually literally totally feel forgot remember rolled roll got get said say agree
    disagree see swear promise be""".split()
)
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "be": "is"}
_MODALS = {"i'll": "will", "i’ll": "will", "i'm going to": "is going to",
           "i’m going to": "is going to", "i'm gonna": "is going to", "i want to": "wants to",
           "i try to": "tries to", "i'd like to": "wants to", "i would like to": "wants to"}
_LEAD = re.compile(
    r"^(?:(?:okay|ok|so|and|then|well|yeah|all right|alright|um|uh)[,]?\s+)*"
    r"(?P<lead>i'?ll|i’ll|i'm going to|i’m going to|i'm gonna|i want to|i try to|i'd like to|"
    r"i would like to|i)\s+(?P<verb>[a-z]+)\b(?!['’])(?P<rest>.*)$",  # "I don't": no verb
    re.IGNORECASE,
)
_REJECT = re.compile(r"\b(?:i|i'm|i'll|i've|i'd|we|we're|we'll|us|our|ours|you|your|you're|"
                     r"y'all|let's)\b|[?\"“”]|--", re.IGNORECASE)
_SECOND_VERB = re.compile(
    r"\b(?:and|then) (?!the\b|a\b|an\b|his\b|her\b|their\b|them\b|it\b|its\b|him\b|"
    r"[A-Z])[a-z]+")
_PLACES_NEXT = set("to into up down over back out in on through toward towards around across "
                   "after with inside outside".split())
_POSSESSIVE = [(re.compile(r"\bmy\b", re.I), "their"), (re.compile(r"\bmyself\b", re.I),
                                                          "themselves"),
               (re.compile(r"\bme\b", re.I), "them"), (re.compile(r"\bmine\b", re.I), "theirs")]


def third_person_verb(verb: str) -> str:
    """"grab" -> "grabs", "reach" -> "reaches", "try" -> "tries"; past tense stays."""
    v = verb.lower()
    if v in _IRREGULAR:
        return _IRREGULAR[v]
    if v.endswith("ed"):
        return v
    if v.endswith(("s", "sh", "ch", "x", "z", "o")):
        return v + "es"
    if len(v) > 2 and v.endswith("y") and v[-2] not in "aeiou":
        return v[:-1] + "ies"
    return v + "s"


def retell_declaration(sentence: str, character: str) -> str | None:
    """"I grab the map." said by the player of Vex -> "Vex grabs the map."; None when the
    sentence is not a plain first-person deed."""
    text = " ".join(sentence.split())
    m = _LEAD.match(text)
    if not m or not character:
        return None
    lead, verb, rest = m.group("lead").lower(), m.group("verb"), m.group("rest")
    if verb.lower() in _NOT_DEEDS or _REJECT.search(rest):
        return None
    if not rest.strip(" .!") or len(rest.split()) < 2:
        return None  # "I attack." says too little to retell
    if _SECOND_VERB.search(rest) or (
        verb.lower() in ("go", "come", "run") and rest.split()[0].lower() not in _PLACES_NEXT
    ):
        return None  # "... and show him", "go grab": a second verb we would not conjugate
    if lead in ("i", "i'i"):
        verb_out = third_person_verb(verb)
        head = f"{character} {verb_out}"
    else:
        head = f"{character} {_MODALS.get(lead, 'will')} {verb.lower()}"
    for pattern, repl in _POSSESSIVE:
        rest = pattern.sub(repl, rest)
    out = f"{head}{rest}".rstrip()
    return out if out.endswith((".", "!")) else out.rstrip(",;:") + "."


_IRREGULAR_PAST = set(
    """took saw got made felt found heard left ran fell held knew threw struck caught brought
    thought stood sat went came gave drew drove flew hid kept led lost met paid put read rode
    rose said sent shot shook slid spoke spun swung told tore won woke wore wrote began broke
    bit blew chose dug did ate forgot froze grew hung knelt laid lit meant sank sang slept
    slew stole stuck swam swore understood hit cut set let""".split()
)
_BE_HAVE = {"are": "is", "were": "was", "have": "has", "'re": "is", "’re": "is", "'ve": "has",
            "’ve": "has", "'ll": "will", "’ll": "will"}
_ADVERBS = set("now also still just then all both even never ever already again soon almost later "
               "only not".split())
_ING_VERBS = set("swing bring sing fling sting cling spring string wring ring".split())
_MODAL_VERBS = set("can could will would should may might must".split())
_ADDRESS = re.compile(
    r"^You(?P<clitic>'re|’re|'ve|’ve|'ll|’ll)?\s+(?P<verb>[a-z]+)\b(?!['’])(?P<rest>.*)$")
_PARTY = re.compile(r"^(?:guys|all|both|two|three|each|folks|and)\b")


def retell_address(sentence: str, character: str) -> str | None:
    """The DM's answer to one player, "You pull the lever.", told about the character:
    "Grog pulls the lever."; None unless it opens with "You" + a verb that can be inflected
    safely and says nothing more about "you" than "your" (which becomes "their")."""
    m = _ADDRESS.match(" ".join(sentence.split()))
    if not m or not character:
        return None
    clitic, verb, rest = m.group("clitic"), m.group("verb"), m.group("rest")
    if _PARTY.match(verb) or _SECOND_VERB.search(rest):
        return None
    if re.search(r"\b(?:you|you're|you've|you'll|yourself|we|us|our|i)\b|[\"“”?]|--", rest,
                 re.IGNORECASE):
        return None
    if clitic:
        head = f"{character} {_BE_HAVE[clitic]} {verb}"
    elif verb in _BE_HAVE:
        head = f"{character} {_BE_HAVE[verb]}"
    elif verb in _MODAL_VERBS or verb in _IRREGULAR_PAST or verb.endswith("ed"):
        head = f"{character} {verb}"
    elif verb in ("see", "hear", "feel", "notice", "watch", "look", "find", "spot", "smell"):
        head = f"{character} {third_person_verb(verb)}"
    elif (verb.endswith("ing") and verb not in _ING_VERBS) or verb.endswith("ly") or (
        verb in _NOT_DEEDS or verb in _ADVERBS
    ):
        return None
    else:
        head = f"{character} {third_person_verb(verb)}"
    rest = re.sub(r"\byour\b", "their", rest, flags=re.IGNORECASE)
    if len(rest.split()) < 2:
        return None
    out = f"{head}{rest}".rstrip()
    return out if out.endswith((".", "!")) else out.rstrip(",;:") + "."


_VOCATIVE = re.compile(
    r"^(?P<names>[A-Z][\w'’-]+(?:(?:,\s*|,?\s+and\s+)[A-Z][\w'’-]+)*),\s+"
    r"(?P<you>you(?:\s+(?:guys|two|both|all))?)(?P<rest>(?:'re|’re|'ve|’ve|'ll|’ll)?\s.*)$")
_PLURAL_BE = {"'re": "are", "’re": "are", "'ve": "have", "’ve": "have", "'ll": "will",
              "’ll": "will"}


def retell_vocative(sentence: str, is_character: Callable[[str], bool]) -> str | None:
    """The DM naming whom "you" means, "Vex, you pick up a strange scent.", told about
    them: "Vex picks up a strange scent."; two or more names, "Tiberius, Vax, you guys walk
    across the bridge.", become "Tiberius and Vax walk across the bridge.". Every name must
    pass `is_character` (an in-game name, never a player's); None when the rest cannot be
    retold safely (see `retell_address`)."""
    m = _VOCATIVE.match(" ".join(sentence.split()))
    if not m:
        return None
    names = [n for n in re.split(r",\s*|\s+and\s+", m.group("names")) if n]
    if not names or not all(is_character(n) for n in names):
        return None
    rest = m.group("rest")
    if len(names) == 1 and m.group("you").lower() == "you":
        return retell_address("You" + rest, names[0])
    party = " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else names[0]
    if len(names) == 1:
        return None  # "Vex, you guys ...": the name is one of several
    clitic = re.match(r"^('re|’re|'ve|’ve|'ll|’ll)", rest)
    if clitic:
        rest = " " + _PLURAL_BE[clitic.group(1)] + rest[len(clitic.group(1)):]
    words = rest.split()
    if not words or len(words) < 3 or _PARTY.match(words[0]) or _SECOND_VERB.search(rest):
        return None
    if re.search(r"\b(?:you|you're|you've|you'll|yourself|yourselves|we|us|our|i)\b|[\"“”?]|--",
                 rest, re.IGNORECASE):
        return None
    if words[0].endswith(("ing", "ly")) or words[0] in _NOT_DEEDS - _MODAL_VERBS - {"have"}:
        return None
    rest = re.sub(r"\byour\b", "their", rest, flags=re.IGNORECASE)
    out = f"{party}{rest}".rstrip()
    return out if out.endswith((".", "!")) else out.rstrip(",;:") + "."
