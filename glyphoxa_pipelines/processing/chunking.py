"""Cut a session's transcript into chunks for the L2 semantic index.

A chunk is a window of consecutive turns written as `SPEAKER: text` lines. Windows aim at
`target_tokens`, overlap by `overlap_turns` so an exchange split by a boundary is still found
whole, start fresh at scene breaks (a long pause, or the DM narrating a shift of place or time),
and never exceed `max_tokens` word pieces of the embedding model: all-MiniLM-L6-v2 silently
truncates at 256, so a turn too long for one chunk is split into pieces (by sentence, then by
word) — every word of the transcript ends up in some chunk.

Token costs are additive over whitespace-separated lines for a word-piece tokenizer, so each
line is counted once; the finished chunk is counted again as a guard.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from glyphoxa_pipelines.memory.models import Chunk, Entity, Entry
from glyphoxa_pipelines.processing.mentions import MentionFinder

CHUNKER_VERSION = "turns-v1"

# The DM moving the story to another place or time: a natural topic boundary.
SCENE_SHIFT = re.compile(
    r"^\W*(?:"
    r"later(?: that| on)?\b|meanwhile\b|elsewhere\b|the next (?:morning|day|evening|night)\b"
    r"|the following (?:morning|day|evening)\b|that (?:night|evening|morning)\b"
    r"|(?:some|a few|several|many|two|three|a couple of) (?:hours|days|minutes|weeks)"
    r"(?: later| pass)\b|an hour (?:later|passes)\b|after (?:a|an|some|several) "
    r"(?:while|hours?|days?|rest)\b|(?:when|as) you (?:arrive|awaken|wake|reach|return|enter)\b"
    r"|you (?:arrive|awaken|wake up|eventually (?:arrive|reach|make))\b"
    r"|(?:the )?(?:long|short) rest\b|we(?:'re| are) back\b|welcome back\b"
    r"|(?:and )?(?:that|this) (?:brings us|is where we)\b"
    r")",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+")

TokenCounter = Callable[[str], int]
KnownNames = Mapping[str, str | Iterable[str]] | MentionFinder | Iterable[Entity] | None


@dataclass(slots=True)
class _Unit:
    """One line of a chunk: a whole turn, or one piece of a turn too long for a chunk."""

    entry: Entry
    line: str
    cost: int  # word pieces without the [CLS]/[SEP] overhead
    scene_break: bool = False


def _mention_finder(known: KnownNames) -> MentionFinder | None:
    if known is None:
        return None
    if isinstance(known, MentionFinder):
        return known
    if isinstance(known, Mapping):
        return MentionFinder(known)
    return MentionFinder.from_entities(known)


def split_sentences(text: str) -> list[str]:
    """Cheap sentence split on terminal punctuation (quotes kept with their sentence)."""
    return [s for s in (p.strip() for p in _SENTENCE_END.split(text)) if s]


def _pack(parts: list[str], costs: list[int], budget: int, sep: str = " ") -> list[list[int]]:
    """Greedy groups of consecutive part indices whose summed cost stays within budget."""
    groups: list[list[int]] = []
    current: list[int] = []
    total = 0
    for i, cost in enumerate(costs):
        if current and total + cost > budget:
            groups.append(current)
            current, total = [], 0
        current.append(i)
        total += cost
    if current:
        groups.append(current)
    return groups


def _split_long_turn(
    entry: Entry, label: str, text: str, budget: int, cost_of: TokenCounter
) -> list[tuple[str, int]]:
    """Pieces `label + part` each costing at most `budget`: by sentence, then by word."""
    label_cost = cost_of(label)
    room = budget - label_cost
    if room < 8:
        raise ValueError(f"speaker label {label!r} leaves no room in a {budget}-piece chunk")
    pieces: list[str] = []
    for sentence in split_sentences(text):
        if cost_of(sentence) <= room:
            pieces.append(sentence)
            continue
        words = sentence.split()
        word_costs = [cost_of(w) for w in words]
        for group in _pack(words, word_costs, room):
            if len(group) == 1 and word_costs[group[0]] > room:  # one absurd "word"
                word = words[group[0]]
                step = max(1, len(word) * room // (2 * word_costs[group[0]]))
                pieces += [word[k : k + step] for k in range(0, len(word), step)]
            else:
                pieces.append(" ".join(words[k] for k in group))
    piece_costs = [cost_of(p) for p in pieces]
    out = []
    for group in _pack(pieces, piece_costs, room):
        line = label + " ".join(pieces[k] for k in group)
        out.append((line, cost_of(line)))
    return out


def turn_label(entry: Entry) -> str:
    """The `SPEAKER: ` that opens each line of an entry in a chunk."""
    return f"{entry.speaker_name or entry.speaker_id or 'Unknown'}: "


def turn_line(entry: Entry) -> str:
    """The line an entry short enough to sit whole in a chunk has there ("" for no text); the
    embedding step finds turns in their chunk's text by it (`turn_spans.py`)."""
    text = " ".join(entry.text.split())
    return turn_label(entry) + text if text else ""


def _entry_end(entry: Entry) -> datetime:
    return entry.spoken_at + timedelta(seconds=entry.duration_s or 0.0)


def is_scene_break(
    previous: Entry | None, entry: Entry, pause_break_s: float, dm_cues: bool = True
) -> bool:
    """A long silence before `entry`, or the DM opening with a change of place or time."""
    if previous is None:
        return False
    gap = (entry.spoken_at - _entry_end(previous)).total_seconds()
    if gap > pause_break_s:
        return True
    return dm_cues and entry.speaker_role == "dm" and bool(SCENE_SHIFT.match(entry.text))


def chunk_transcript(
    entries: list[Entry],
    *,
    count_tokens: TokenCounter,
    max_tokens: int = 256,
    target_tokens: int = 180,
    overlap_turns: int = 1,
    pause_break_s: float = 120.0,
    min_scene_tokens: int = 60,
    known_names: KnownNames = None,
    campaign_id: str | None = None,
    session_id: str | None = None,
) -> list[Chunk]:
    """Chunks of one session's entries (in `spoken_at` order), each within `max_tokens`.

    `count_tokens` is the embedding model's counter (special tokens included); `known_names`
    maps names/aliases to entity ids (or is a MentionFinder / entities) to fill `entity_ids`.
    A scene break closes the current chunk without overlap once it holds `min_scene_tokens`.
    """
    if not entries:
        return []
    if target_tokens > max_tokens:
        target_tokens = max_tokens
    session_id = session_id or entries[0].session_id
    campaign_id = campaign_id or entries[0].campaign_id
    if any(e.session_id != session_id for e in entries):
        raise ValueError("chunk_transcript takes the entries of one session")
    ordered = sorted(entries, key=lambda e: (e.spoken_at, e.id))
    overhead = count_tokens("")  # [CLS] + [SEP]
    budget = max_tokens - overhead

    def cost_of(text: str) -> int:
        return count_tokens(text) - overhead

    units: list[_Unit] = []
    previous: Entry | None = None
    for entry in ordered:
        line = turn_line(entry)
        if not line:
            continue
        label = turn_label(entry)
        text = line[len(label) :]
        cost = cost_of(line)
        brk = is_scene_break(previous, entry, pause_break_s)
        if cost <= budget:
            units.append(_Unit(entry, line, cost, brk))
        else:
            for k, (piece, piece_cost) in enumerate(
                _split_long_turn(entry, label, text, budget, cost_of)
            ):
                units.append(_Unit(entry, piece, piece_cost, brk and k == 0))
        previous = entry

    groups: list[list[_Unit]] = []
    current: list[_Unit] = []
    total = 0
    fresh = 0  # units in `current` not carried over from the previous chunk
    for unit in units:
        scene_cut = unit.scene_break and total >= min_scene_tokens and fresh > 0
        full = total + unit.cost > budget or (total >= target_tokens and fresh > 0)
        if current and (scene_cut or full):
            groups.append(current)
            carry: list[_Unit] = []
            if not scene_cut and overlap_turns > 0:
                carry = current[-overlap_turns:]
                while carry and sum(u.cost for u in carry) + unit.cost > budget:
                    carry = carry[1:]  # progress first: overlap never pushes a chunk over
                if sum(u.cost for u in carry) >= target_tokens:
                    carry = []
            current, total, fresh = list(carry), sum(u.cost for u in carry), 0
        current.append(unit)
        total += unit.cost
        fresh += 1
    if current and fresh > 0:
        groups.append(current)

    finder = _mention_finder(known_names)
    chunks: list[Chunk] = []
    for seq, group in enumerate(groups):
        text = "\n".join(u.line for u in group)
        tokens = count_tokens(text)
        if tokens > max_tokens:  # additivity broke (unusual tokenizer): fail loudly, never cut
            raise ValueError(f"chunk {seq} of {session_id} has {tokens} > {max_tokens} tokens")
        group_entries = [u.entry for u in group]
        chunks.append(
            Chunk(
                id=f"{session_id}#{seq:05d}",
                campaign_id=campaign_id,
                session_id=session_id,
                seq=seq,
                text=text,
                speakers=list(dict.fromkeys(e.speaker_name for e in group_entries)),
                entity_ids=finder.entity_ids(text) if finder else [],
                first_entry_id=group_entries[0].id,
                last_entry_id=group_entries[-1].id,
                start_at=group_entries[0].spoken_at,
                end_at=max(_entry_end(e) for e in group_entries),
                token_count=tokens,
                chunker_version=CHUNKER_VERSION,
            )
        )
    return chunks
