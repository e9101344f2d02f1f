"""Scoring what the loop heard: word error rate, entity names heard exactly, percentiles, and
the bench's seeded draw of demo-campaign lines that name someone."""

from __future__ import annotations

import json
import random
import re
from typing import Any

from glyphoxa_pipelines.demo import SAMPLE_SESSIONS_DIR
from glyphoxa_pipelines.providers.speech import SpeechToText, TextToSpeech

RATES = (0.85, 1.0, 1.2)


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))], 2)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def wer(ref: str, hyp: str) -> tuple[int, int]:
    """(edit distance in words, reference length)."""
    r, h = words(ref), words(hyp)
    row = list(range(len(h) + 1))
    for i, rw in enumerate(r, 1):
        prev, row[0] = row[0], i
        for j, hw in enumerate(h, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (rw != hw))
    return row[len(h)], len(r)


def name_misses(ref: str, hyp: str, names: list[str]) -> tuple[int, int]:
    """(reference names not heard exactly, reference names) — whole words, case-insensitive."""
    found = [n for n in names if re.search(rf"\b{re.escape(n)}\b", ref, re.IGNORECASE)]
    found = [n for n in found if not any(n != m and n in m and re.search(
        rf"\b{re.escape(m)}\b", ref, re.IGNORECASE) for m in found)]  # "Hask" inside "Captain Hask"
    missed = sum(1 for n in found if not re.search(rf"\b{re.escape(n)}\b", hyp, re.IGNORECASE))
    return missed, len(found)


def pick_lines(names: list[str], count: int, seed: int) -> list[tuple[str, float]]:
    pattern = re.compile("|".join(rf"\b{re.escape(n)}\b" for n in names), re.IGNORECASE)
    lines = []
    for path in sorted(SAMPLE_SESSIONS_DIR.glob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(raw)
            if row.get("role") in ("player", "dm") and pattern.search(row["text"]):
                lines.append(row["text"])
    rng = random.Random(seed)
    rng.shuffle(lines)
    return [(line, rng.choice(RATES)) for line in lines[:count]]


def boosting(tts: TextToSpeech, stt: SpeechToText, lines: list[tuple[str, float]],
             boost: str, all_names: list[str]) -> dict[str, Any]:
    """Entity-name error and WER with and without the campaign's names as hotwords."""
    counts = {"plain": [0, 0, 0, 0], "boosted": [0, 0, 0, 0]}  # name miss, names, wer, words
    for text, rate in lines:
        audio = tts.synthesize(text, length_scale=rate)
        for label, hot in (("plain", None), ("boosted", boost)):
            heard = stt.transcribe(audio.samples, audio.sample_rate, hotwords=hot).text
            m, n = name_misses(text, heard, all_names)
            e, w = wer(text, heard)
            c = counts[label]
            c[0], c[1], c[2], c[3] = c[0] + m, c[1] + n, c[2] + e, c[3] + w
    return {label: {"entity_error_rate": round(c[0] / max(c[1], 1), 3), "names": c[1],
                    "wer": round(c[2] / max(c[3], 1), 3)} for label, c in counts.items()}


def names_in(text: str, names: list[str]) -> set[str]:
    """The names (case-folded) said in `text` as whole words."""
    return {n.lower() for n in names if re.search(rf"\b{re.escape(n)}\b", text, re.IGNORECASE)}
