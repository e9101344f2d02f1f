"""'Previously on…' recaps read to the table at the start of the next session.

Offline: a template that retells the summary's key points in the third person (the DM's "you"
becomes "our heroes") with varied connectives, then the most important facts learned, then a
cliffhanger line — deterministic for a given session. With an LLM configured, a dramatic
narration written from the same material.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from glyphoxa_pipelines.memory.models import Recap, SessionSummary

if TYPE_CHECKING:
    from glyphoxa_pipelines.providers.llm import ChatLLM

RECAP_VERSION = "template-v2"  # v2: "you" as subject vs object
LLM_RECAP_VERSION = "llm-recap-v1"

_CONNECTIVES = ["It began when", "Then", "Soon after,", "Meanwhile,", "Later,", "And so"]
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
_OTHER_YOU = re.compile(r"\b(\w+)(\s+)you\b|\byou\b", re.I)


def _other_you(m: re.Match[str]) -> str:
    before = m.group(1)
    if before is None:  # no word before it
        return "they"
    prev = before.lower()
    is_object = (
        prev in _PREPOSITIONS
        or prev in _OBJECT_VERBS
        or (prev.endswith(("s", "ed")) and prev not in {"is", "was", "has", "as", "this"})
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
    first = text.split()[0].strip(",.'\"") if text.split() else ""
    if first and first[0].isupper() and not first.isupper() and (
        zipf_frequency(first.lower(), "en") >= 4.0 or first in {"Our"}
    ):
        return text[0].lower() + text[1:]
    return text


def recap_from_summary(
    summary: SessionSummary,
    *,
    facts: Iterable[str] = (),
    campaign_name: str = "",
    max_points: int = 6,
    max_facts: int = 4,
) -> Recap:
    """A templated recap from a session summary and fact sentences (e.g. KnownFact.sentence())."""
    seed = zlib.crc32(summary.session_id.encode())
    points = [p for p in summary.key_points if len(p.split()) >= 5] or (
        [summary.summary] if summary.summary else []
    )
    if len(points) > max_points:  # spread the picks across the session
        step = len(points) / max_points
        points = [points[int(i * step)] for i in range(max_points)]
    title = f"Previously, on {campaign_name}…" if campaign_name else "Previously…"
    lines = [title, ""]
    body = []
    for i, point in enumerate(points):
        text = third_person(point.strip().strip('"“”'))
        if ":" in text.split(" ")[0]:  # "NAME: line" from the table
            speaker, said = text.split(":", 1)
            text = f"{speaker.strip().title()} declared, “{said.strip()}”"
            body.append(f"{_CONNECTIVES[0] if i == 0 else _CONNECTIVES[1]} {text}")
            continue
        if i == 0:
            connective = _CONNECTIVES[0]
        elif i == len(points) - 1 and len(points) > 2:
            connective = _CONNECTIVES[-1]
        else:
            connective = _CONNECTIVES[1 + (seed + i) % (len(_CONNECTIVES) - 2)]
        body.append(f"{connective} {_lower_first(text)}")
    if body:
        lines.append(" ".join(s if s.endswith((".", "!", "?", "”")) else s + "." for s in body))
    fact_list = [f.strip().rstrip(".") for f in facts if f and f.strip()][:max_facts]
    if fact_list:
        lines += ["", "Along the way, they learned that " + "; that ".join(fact_list) + "."]
    lines += ["", _CLOSERS[seed % len(_CLOSERS)]]
    return Recap(
        session_id=summary.session_id,
        campaign_id=summary.campaign_id,
        text="\n".join(lines).strip(),
        method=RECAP_VERSION,
    )


LLM_RECAP_SYSTEM = (
    "You are the narrator of a tabletop role-playing campaign. Write a dramatic 'Previously "
    "on…' recap (120-220 words, present tense, third person, vivid but faithful: invent no "
    "events) to be read aloud at the start of the next session. Answer with one JSON object: "
    '{"recap": "the text"}.'
)


def recap_llm(
    summary: SessionSummary,
    llm: ChatLLM,
    *,
    facts: Sequence[str] = (),
    campaign_name: str = "",
) -> Recap | None:
    """LLM-written recap from the summary and facts; None when the answer is unusable."""
    material = f"Campaign: {campaign_name or 'unnamed'}\nSummary: {summary.summary}\n"
    if summary.key_points:
        material += "Key points:\n" + "\n".join(f"- {p}" for p in summary.key_points) + "\n"
    if facts:
        material += "Facts learned:\n" + "\n".join(f"- {f}" for f in facts) + "\n"
    answer = llm.complete_json(LLM_RECAP_SYSTEM, material)
    text = answer.get("recap") if answer else None
    if not isinstance(text, str) or not text.strip():
        return None
    return Recap(
        session_id=summary.session_id,
        campaign_id=summary.campaign_id,
        text=text.strip(),
        method=LLM_RECAP_VERSION,
    )
