"""Session summaries: what happened (decisions, reveals, promises, outcomes).

Offline default is extractive: the session is split into consecutive segments (so the summary
covers the whole session, in order), and each segment contributes its best sentence — scored by
how central its chunk is (cosine to the session's mean chunk embedding, which the pipeline has
already computed), by cue words of plot events, by DM narration over table talk, by named
entities — with maximal marginal relevance against sentences already chosen so the summary does
not repeat itself (hashed bag-of-words similarity by default: on the eight CRD3 episodes it
matched sentence embeddings for ROUGE against the wiki synopses at a twentieth of the cost; pass
`embedder` to use embeddings). Centrality is weighted lightly: on CRD3 the most central chunks
are often repetitive combat. With an LLM configured, `summarize_session_llm` writes an
abstractive summary.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from glyphoxa_pipelines.memory.models import Chunk, SessionSummary
from glyphoxa_pipelines.processing.chunking import split_sentences

if TYPE_CHECKING:
    from glyphoxa_pipelines.providers.embeddings import Embedder
    from glyphoxa_pipelines.providers.llm import ChatLLM

SUMMARIZER_VERSION = "extractive-v1"
LLM_SUMMARIZER_VERSION = "llm-summary-v1"

CUE_WORDS = re.compile(
    r"\b(?:decid\w*|agree\w*|promis\w*|swear|swore|vow\w*|reveal\w*|discover\w*|learn\w*|"
    r"realiz\w*|found|finds?|kill\w*|slain|slay\w*|die[sd]?|dead|death|defeat\w*|destroy\w*|"
    r"escap\w*|arriv\w*|enter\w*|reward\w*|quest|mission|hire[sd]?|accept\w*|refus\w*|"
    r"betray\w*|secret\w*|truth|steal\w*|stole|rescu\w*|sav(?:e|ed|es)|attack\w*|ambush\w*|"
    r"captur\w*|missing|disappear\w*|search\w*|mine|tunnel\w*|cavern\w*|city|temple|council|"
    r"lord|lady|king|queen|gold|map|letter|warn\w*|threat\w*|danger\w*|plan\w*|head(?:s|ed)? "
    r"(?:to|for|into)|travel\w*|leave|left|return\w*)\b",
    re.IGNORECASE,
)
TABLE_TALK = re.compile(
    r"\b(?:roll(?:ed|ing|s)?|d20|d\d+|damage|initiative|hit points|points of|armor class|"
    r"saving throw|spell slot|bonus action|my turn|your turn|natural \d+|nat \d+|modifier|"
    r"advantage|disadvantage|minus|plus \d+|\d+ (?:plus|minus)|okay|ok|yeah|guys|episode|"
    r"stream|chat|twitch|camera|break|dice)\b",
    re.IGNORECASE,
)
OUT_OF_GAME = re.compile(
    r"\b(?:by the way|today|tonight|this week|next week|my name is|voice actors?|"
    r"dungeons (?:&|and) dragons|dungeon master|twitch|stream(?:ing)?|episodes?|sponsor\w*|"
    r"subscribe\w*|chat(?:room)?|patreon|website|youtube|donat\w+|charity)\b",
    re.I,
)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z'’]+(?:\s+[A-Z][a-z'’]+)*")
_LINE = re.compile(r"^(?P<speaker>[^:\n]{1,60}):\s(?P<text>.*)$")


@dataclass(frozen=True, slots=True)
class _Candidate:
    chunk_index: int
    order: int
    speaker: str
    text: str
    score: float


def _sentence_score(text: str, speaker: str, dm_names: set[str]) -> float:
    words = text.split()
    n = len(words)
    if n < 7 or n > 70:
        return -1.0
    score = 0.0
    score += 0.35 * min(3, len(CUE_WORDS.findall(text)))
    score -= 0.45 * min(3, len(TABLE_TALK.findall(text)))
    score += 0.25 * min(3, len(_NAME.findall(text)))
    if speaker.lower() in dm_names:
        score += 0.6
        if text.startswith('"') or text.startswith("“"):
            score -= 0.2  # an NPC's line, not narration
    if text.endswith("?"):
        score -= 0.5
    if "(" in text or OUT_OF_GAME.search(text):
        score -= 0.6  # stage directions and out-of-game remarks
    if re.match(r"(?:I|I'm|I've|I'll|We're|We'll)\b", text) and speaker.lower() not in dm_names:
        score -= 0.3
    if re.search(r"\d", text):
        score -= 0.2
    score += 0.1 * min(n, 30) / 30
    return score


def _candidates(chunks: Sequence[Chunk], dm_names: set[str]) -> list[_Candidate]:
    out: list[_Candidate] = []
    seen: set[str] = set()
    order = 0
    for ci, chunk in enumerate(chunks):
        for line in chunk.text.split("\n"):
            m = _LINE.match(line)
            speaker, body = (m.group("speaker"), m.group("text")) if m else ("", line)
            for sentence in split_sentences(body):
                key = sentence.lower()
                if key in seen:  # overlap between chunks repeats lines
                    continue
                seen.add(key)
                order += 1
                score = _sentence_score(sentence, speaker, dm_names)
                if score > 0:
                    out.append(_Candidate(ci, order, speaker, sentence, score))
    return out


def _chunk_centrality(embeddings: np.ndarray | None, n: int) -> np.ndarray:
    if embeddings is None or len(embeddings) != n or n == 0:
        return np.zeros(n, dtype=np.float32)
    mean = embeddings.mean(axis=0)
    norm = np.linalg.norm(mean)
    if norm == 0:
        return np.zeros(n, dtype=np.float32)
    cent = embeddings @ (mean / norm)
    lo, hi = float(cent.min()), float(cent.max())
    return (cent - lo) / (hi - lo) if hi > lo else np.zeros(n, dtype=np.float32)


def _lexical_vectors(texts: list[str]) -> np.ndarray:
    """Hashed bag-of-words unit vectors: MMR redundancy when no embedder is available."""
    dim = 1024
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for i, text in enumerate(texts):
        for word in re.findall(r"[a-z']{4,}", text.lower()):
            out[i, zlib.crc32(word.encode()) % dim] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1
    return out / norms


def _present(candidate: _Candidate, dm_names: set[str]) -> str:
    """Narration stands alone; a player's or NPC's line keeps who said it."""
    if not candidate.speaker or candidate.speaker.lower() in dm_names:
        return candidate.text
    return f"{candidate.speaker}: {candidate.text}"


def summarize_session(
    chunks: Sequence[Chunk],
    embeddings: np.ndarray | None = None,
    *,
    embedder: Embedder | None = None,
    campaign_id: str | None = None,
    session_id: str | None = None,
    max_points: int | None = None,
    dm_names: Sequence[str] = (),
    mmr_lambda: float = 0.7,
    shortlist_per_segment: int = 3,
    min_score: float = 1.0,
    centrality_weight: float = 0.6,
) -> SessionSummary:
    """Extractive summary of a session from its chunks (in order) and their embeddings.

    A segment whose best sentence scores below `min_score` (only table talk) is skipped.
    `embeddings` are the chunks' unit vectors (row i for chunks[i]); `embedder` embeds the
    short-listed sentences for redundancy control (hashed bag-of-words without one). DM lines
    are recognised by speaker names in `dm_names` (default: speakers labelled DM/GM, or the
    most frequent speaker when none is).
    """
    chunks = sorted(chunks, key=lambda c: c.seq)
    if not chunks:
        raise ValueError("cannot summarize a session without chunks")
    campaign_id = campaign_id or chunks[0].campaign_id
    session_id = session_id or chunks[0].session_id
    dms = {d.lower() for d in dm_names} or _guess_dm(chunks)
    candidates = _candidates(chunks, dms)
    if not candidates:
        return SessionSummary(session_id, campaign_id, "", [], method=SUMMARIZER_VERSION)
    if embeddings is not None and len(embeddings) != len(chunks):
        raise ValueError("embeddings must have one row per chunk")
    centrality = _chunk_centrality(embeddings, len(chunks))

    if max_points is None:  # ~one point per quarter hour of play
        max_points = min(25, max(6, len(chunks) // 12))
    n_segments = max(1, min(max_points, len(chunks)))
    bounds = np.linspace(0, len(chunks), n_segments + 1).astype(int)
    segment_of = np.searchsorted(bounds, np.arange(len(chunks)), side="right") - 1
    by_segment: dict[int, list[tuple[float, _Candidate]]] = {}
    for cand in candidates:
        total = cand.score + centrality_weight * float(centrality[cand.chunk_index])
        by_segment.setdefault(int(segment_of[cand.chunk_index]), []).append((total, cand))
    shortlist: list[tuple[int, float, _Candidate]] = []
    for seg, items in by_segment.items():
        items.sort(key=lambda x: -x[0])
        shortlist += [(seg, score, cand) for score, cand in items[:shortlist_per_segment]]

    texts = [cand.text for _, _, cand in shortlist]
    vectors = embedder.embed(texts) if embedder is not None else _lexical_vectors(texts)
    chosen: list[int] = []
    for seg in sorted(by_segment):
        best, best_value = None, -1e9
        for i, (s, score, _) in enumerate(shortlist):
            if s != seg:
                continue
            redundancy = max((float(vectors[i] @ vectors[j]) for j in chosen), default=0.0)
            value = mmr_lambda * score - (1 - mmr_lambda) * 3.0 * redundancy
            if score >= min_score and value > best_value:
                best, best_value = i, value
        if best is not None:
            chosen.append(best)
    picked = sorted((shortlist[i][2] for i in chosen), key=lambda c: c.order)
    key_points = [_present(c, dms) for c in picked]
    summary = " ".join(key_points)
    return SessionSummary(
        session_id=session_id,
        campaign_id=campaign_id,
        summary=summary,
        key_points=key_points,
        method=SUMMARIZER_VERSION,
    )


def _guess_dm(chunks: Sequence[Chunk]) -> set[str]:
    counts: dict[str, int] = {}
    for chunk in chunks:
        for line in chunk.text.split("\n"):
            if m := _LINE.match(line):
                speaker = m.group("speaker")
                counts[speaker] = counts.get(speaker, 0) + len(m.group("text"))
    labelled = {s.lower() for s in counts if s.lower() in {"dm", "gm", "dungeon master"}}
    if labelled:
        return labelled
    return {max(counts, key=lambda s: counts[s]).lower()} if counts else set()


LLM_SUMMARY_SYSTEM = (
    "You summarize one session of a tabletop role-playing game for the players' and NPCs' "
    "long-term memory. Report what happened in the story, in order: decisions, reveals, "
    "promises, deals, fights and their outcomes, places visited, who was met. Ignore table "
    "talk and game mechanics. Answer with one JSON object: "
    '{"summary": "one or two paragraphs", "key_points": ["short factual sentence", ...]}.'
)


def summarize_session_llm(
    chunks: Sequence[Chunk],
    llm: ChatLLM,
    *,
    campaign_id: str | None = None,
    session_id: str | None = None,
    window_chars: int = 24_000,
) -> SessionSummary | None:
    """Abstractive summary: partial summaries of transcript windows, then one merge call.

    Returns None when the model's answers are unusable, so the caller falls back to the
    extractive summary.
    """
    chunks = sorted(chunks, key=lambda c: c.seq)
    if not chunks:
        return None
    campaign_id = campaign_id or chunks[0].campaign_id
    session_id = session_id or chunks[0].session_id
    lines: list[str] = []
    seen: set[str] = set()
    for chunk in chunks:
        for line in chunk.text.split("\n"):
            if line not in seen:
                seen.add(line)
                lines.append(line)
    windows: list[str] = []
    current = ""
    for line in lines:
        if current and len(current) + len(line) > window_chars:
            windows.append(current)
            current = ""
        current += line + "\n"
    if current:
        windows.append(current)
    partials: list[dict] = []
    for n, window in enumerate(windows, start=1):
        answer = llm.complete_json(
            LLM_SUMMARY_SYSTEM, f"Part {n} of {len(windows)} of the transcript:\n{window}"
        )
        if answer and isinstance(answer.get("summary"), str):
            partials.append(answer)
    if not partials:
        return None
    if len(partials) == 1:
        final = partials[0]
    else:
        joined = "\n\n".join(
            f"Part {i}: {p['summary']}\nKey points: {p.get('key_points', [])}"
            for i, p in enumerate(partials, start=1)
        )
        final = llm.complete_json(
            LLM_SUMMARY_SYSTEM, f"Merge these partial summaries of one session:\n{joined}"
        ) or {
            "summary": " ".join(p["summary"] for p in partials),
            "key_points": [k for p in partials for k in p.get("key_points", [])],
        }
    points = [str(k) for k in final.get("key_points") or [] if str(k).strip()]
    return SessionSummary(
        session_id=session_id,
        campaign_id=campaign_id,
        summary=str(final.get("summary") or " ".join(points)),
        key_points=points,
        method=LLM_SUMMARIZER_VERSION,
    )
