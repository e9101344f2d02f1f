"""A transcript sentence made written prose, or refused.

Why: a session summary is built from what was said at the table, and spoken sentences carry
hedges ("kind of", "you guys", "essentially"), the table's voice (the DM as himself, "we",
slang) and broken clauses ("Comes down to swing at you"). Written retellings drop the first,
and a summary of fixed length then has room for what happened; the rest cannot be read out of
place, so it never becomes a summary's point. Pure functions over strings.
"""

from __future__ import annotations

import re

_OPENER = re.compile(
    r"^(?:(?:so|and|but|okay|ok|all right|alright|now|well|yeah|yes|no|um|uh|oh|essentially|"
    r"anyway|then|as such)\b[,]?\s+)+",
    re.IGNORECASE,
)
MIN_WORDS, MAX_WORDS = 8, 55
# the table's voice inside narration: the DM as himself ("I know", "we now have"), slang
_TABLE_VOICE = re.compile(r"\b(?:guys|gonna|wanna|yeah|okay|my god|fuck\w*|shit\w*|crap|"
                          r"bitch\w*|let me|let's|like,)|^at which\b|\b(?:we|we're|"
                          r"we'll|we've|us)\b|\bI\b", re.IGNORECASE)
_FRAGMENT = re.compile(r"^(?:because|which|other than|whereas)\b", re.IGNORECASE)
_HEADLESS = re.compile(r"^(?:With|As|Then|And|After)\b[^,]{0,40}, [a-z]+s (?:it|him|her|them|the|"
                       r"his|its|a|an|right|down|back|up|out)\b")
_SUBJECTLESS = re.compile(r"^[A-Z][a-z]+e?s (?:down|back|forward|up|out|off|over|around|away|"
                          r"in|into|to|at|through|toward|towards)\b")


def zipf(word: str) -> float:
    """How common an English word is (wordfreq's Zipf scale: ~7 for "the", below 3 rare);
    the word lists load on first use."""
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en")


# Spoken hedges and table voice that carry no story: a written retelling drops them, and a
# summary of fixed length then has room for what happened.
_FILLERS = [
    (re.compile(r"\b(?:kind of|sort of|kinda|sorta)\s+", re.I), ""),
    (re.compile(r",?\s*\b(?:essentially|basically|actually|literally|by the way|at this point|"
                r"for a second|for a moment|right now|currently|genuinely)\b,?", re.I), ""),
    (re.compile(r"\b(you|they) (?:guys|all)\b", re.I), r"\1"),
    (re.compile(r"\b(?:just|very|really) (?=[a-z])", re.I), ""),
    (re.compile(r"\b(?:a little bit|a bit)\s+(?=[a-z]+er\b)", re.I), ""),
    (re.compile(r"\s+like (?:this|that)(?=[.!]$)", re.I), ""),  # the DM's gesture
    (re.compile(r",\s*specifically,", re.I), ""),
    (re.compile(r"\s+specifically\b(?!,)", re.I), ""),
]


# "-ly" words that are not manner adverbs, or whose loss changes what is said
_KEEP_LY = set("""only early likely unlikely barely hardly nearly rarely scarcely daily friendly
    lonely ugly holy silly deadly elderly lovely costly ghostly curly wobbly fly ally belly jelly
    rely reply supply apply assembly family italy july bully lily folly jolly sly comply
    partly mostly fully completely entirely""".split())
_ADVERB = re.compile(r"(?<=[a-z,] )([a-z]{4,}ly)\b,?\s*")


def _drop_adverb(m: re.Match[str]) -> str:
    word = m.group(1)
    if word in _KEEP_LY or zipf(word[:-2]) < 3.0 and zipf(word[:-3] + "e") < 3.0:
        return m.group(0)  # not an adverb of a known word ("assembly", "holy")
    return ""


def compress(text: str) -> str:
    """Fillers out ("you guys kind of just step" -> "you step"), manner adverbs out ("slowly
    begins to" -> "begins to"), spacing and commas mended."""
    for pattern, repl in _FILLERS:
        text = pattern.sub(repl, text)
    text = _ADVERB.sub(_drop_adverb, text)
    text = re.sub(r"\s+([,.!?;])", r"\1", " ".join(text.split()))
    text = re.sub(r",\s*,", ",", text).lstrip(", ")
    return text


def clean_sentence(text: str) -> str:
    """A transcript sentence as written prose: no stage directions, no spoken openers
    ("So, okay, ..."), no fillers, no trailing detail, a capital first letter."""
    text = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", text)
    text = " ".join(text.split())
    text = trim_leading_clause(trim_trailing_detail(compress(_OPENER.sub("", text))))
    text = _OPENER.sub("", text)
    return text[:1].upper() + text[1:] if text else text


# A trailing phrase after the main clause that only colours it: a participle ("..., feeling
# it rock to and fro"), a simile ("..., like a ..."), an absolute ("..., with ...").
_TRAILING = re.compile(r"^(?:(?P<ing>[a-z]+ing)\b|as if\b|as though\b|like\b|almost\b|"
                       r"with\b|still\b)")
_NOT_PARTICIPLE = set("""king thing ring something nothing everything anything morning evening
    building ceiling during bring sing string wing swing sting spring""".split())
MIN_KEPT_WORDS = 6


def trim_trailing_detail(text: str) -> str:
    """The sentence without trailing colour: "You walk across the bridge, keeping grip on
    both rails, feeling it rock" -> "You walk across the bridge." Why: a summary of fixed
    length then tells more of what happened; a phrase naming someone (a capital inside it)
    is kept, and so is a main clause too short to stand alone."""
    end = text[-1:] if text[-1:] in ".!" else ""
    parts = (text[:-1] if end else text).split(", ")
    while len(parts) > 1:
        m = _TRAILING.match(parts[-1])
        if not m or m.group("ing") in _NOT_PARTICIPLE or re.search(r"\b[A-Z]", parts[-1]):
            break
        if len(", ".join(parts[:-1]).split()) < MIN_KEPT_WORDS:
            break
        parts.pop()
    return ", ".join(parts) + end


def usable(text: str) -> bool:
    """Whole sentences only: no broken-off speech, no questions, a sensible length."""
    n = len(text.split())
    if not MIN_WORDS <= n <= MAX_WORDS:
        return False
    if "--" in text or "—" in text or text.endswith(("?", ",", "-")):
        return False
    if re.search(r"[,;]\s*[.!]$|\s[,.]", text):
        return False  # a stage direction cut out of the middle left a hole
    if text.count('"') % 2 or text.count("“") != text.count("”"):
        return False  # half a quote
    if text.split()[0].lower().endswith("ing"):
        return False  # "Landing right on top of ...": no subject
    if re.match(r"^[A-Z][a-z]+(?:, [a-z]+){2,}|^[A-Z][a-z]+ one\b", text) or (
        _SUBJECTLESS.match(text) and zipf(text.split()[0].lower()) >= 3.5):
        return False  # "Tall, lanky, long, ...", "Comes down to swing": no subject
    if re.match(r"^\w+, (?:of|in|to|for|with|at|by|from)\b", text):
        return False  # "However, of House ...": the transcript lost the subject
    if re.match(r"^You,|^[A-Z][a-z]+, (?!(?:through|into|across|over|under|in|on|at|as|from|"
                r"with|without|after|before|behind|beneath)\b)[a-z]+ (?:the|a|an|his|her|its|"
                r"their)\b", text):
        return False  # "Lifeless, pull the blade from the maw": no subject
    if len(re.findall(r"\byou\b", text, re.I)) >= 3 or re.search(r", (?!You\b)[A-Z][\w'’]+, ",
                                                                   text) and "you" in text:
        return False  # "you slam into it, you can see you slam"; "note, Vex, that you ..."
    if _TABLE_VOICE.search(text) or _HEADLESS.match(text) or _FRAGMENT.match(text):
        return False  # "my god guys, this is amazing!"; "With a yell, slams it ..."
    if re.search(r"\b[A-Z]{3,}\b", text) or re.match(r"^I\b|^I'", text):
        return False  # a speaker label inside a line; an NPC's "I" read as narration
    return text[:1].isupper() and text[-1:] in ".!\"”'"


# A leading clause of time or manner ("As you step back, ...", "Once inside, ...") sets up
# the main clause; the main clause alone still says what happened.
_LEADING = re.compile(r"^(?:As|When|While|Once|After|Before|Suddenly|Eventually|At this point|"
                      r"At which point|In doing so|As you do|As this happens)\b[^,]{0,80}, "
                      r"(?=[a-z])")


_SUBJECT_START = set("""you he she it they there the a an this that these those his her its their
    your one some each both all several two three four five many few""".split())


def trim_leading_clause(text: str) -> str:
    """"As the hood falls back, you see a smooth purple head." -> "You see a smooth purple
    head."; a clause naming someone (a capital inside it) is kept, and so is a main clause
    too short to stand alone."""
    m = _LEADING.match(text)
    if not m or re.search(r"(?<!^)\b[A-Z]", m.group(0)):
        return text
    rest = text[m.end():]
    if len(rest.split()) < MIN_KEPT_WORDS or rest.split()[0] not in _SUBJECT_START:
        return text  # "As you let it, go it bursts": the transcript's comma was misplaced
    return rest[:1].upper() + rest[1:]
