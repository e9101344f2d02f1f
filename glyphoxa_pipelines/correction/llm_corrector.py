"""Stage 2: LLM correction of the spans stage 1 could not settle (background path only).

The model sees the known names and the uncertain spans and answers JSON (corrected text plus
itemised corrections). It is not trusted: every token-level change it did not declare is reverted,
declared changes that do not sound like the replaced span (Jaro-Winkler < 0.70) are rejected,
and any failure — network, HTTP error, garbage, wrong shape — leaves the text as it was.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz.distance import JaroWinkler

from glyphoxa_pipelines.correction.models import Correction, CorrectionConfig
from glyphoxa_pipelines.correction.name_index import NameIndex, normalize
from glyphoxa_pipelines.correction.phonetic import Token, tokenize
from glyphoxa_pipelines.providers.openai_client import make_client

log = logging.getLogger(__name__)

DEFAULT_API_KEY_ENV = "GLYPHOXA_LLM_API_KEY"
MAX_NAMES_IN_PROMPT = 300

SYSTEM_PROMPT = """\
You fix speech-to-text errors in a transcript of a tabletop role-playing game.
Fantasy names are often misheard (split into English-looking words, respelled, merged).
Known names of this campaign (canonical names and aliases):
{names}

Rules:
- Only change words inside the flagged spans, and only when they are a misheard known name.
- Never rephrase, reorder, add or remove anything else; keep punctuation and casing elsewhere.
- Answer with one JSON object and nothing else:
  {{"text": "<the whole corrected utterance>",
    "corrections": [{{"original": "<span as heard>", "replacement": "<known name>"}}]}}
- If nothing needs fixing, return the text unchanged and an empty corrections list."""


@dataclass
class LLMCorrector:
    """Client settings of an OpenAI-compatible chat endpoint used for stage 2.

    The key is `api_key`, else the environment variable `api_key_env`, else OPENAI_API_KEY;
    local servers accept any key. One attempt by default: stage 2 is best effort and a failure
    simply keeps the stage-1 text.
    """

    model: str
    base_url: str | None = None
    api_key: str | None = None
    api_key_env: str = DEFAULT_API_KEY_ENV
    temperature: float = 0.1
    timeout_s: float = 30.0
    max_retries: int = 0
    json_mode: bool = True
    client: Any = field(default=None, repr=False)

    @classmethod
    def from_env(cls) -> LLMCorrector | None:
        """The corrector configured by GLYPHOXA_LLM_BASE_URL / GLYPHOXA_LLM_MODEL, else None."""
        model = os.environ.get("GLYPHOXA_LLM_MODEL") or None
        base_url = os.environ.get("GLYPHOXA_LLM_BASE_URL") or None
        has_key = bool(os.environ.get(DEFAULT_API_KEY_ENV) or os.environ.get("OPENAI_API_KEY"))
        if model is None or (base_url is None and not has_key):
            return None
        return cls(model=model, base_url=base_url)

    def _client(self) -> Any:
        if self.client is None:
            self.client = make_client(
                self.base_url,
                self.api_key,
                api_key_env=self.api_key_env,
                timeout_s=self.timeout_s,
                max_retries=self.max_retries,
            )
        return self.client

    def ask(self, text: str, flagged: Sequence[str], names: Sequence[str]) -> dict[str, Any] | None:
        """The model's JSON answer for one utterance, or None when anything went wrong."""
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT.format(names="\n".join(names))},
            {
                "role": "user",
                "content": json.dumps({"text": text, "flagged": list(flagged)}, ensure_ascii=False),
            },
        ]
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
        }
        if self.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        try:
            response = self._client().chat.completions.create(**kwargs)
            content = response.choices[0].message.content or ""
        except Exception as exc:  # noqa: BLE001 - any failure means "keep the text"
            log.warning("LLM correction failed: %s", exc)
            return None
        return parse_json_object(content)


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def parse_json_object(content: str) -> dict[str, Any] | None:
    """The first JSON object in `content` (bare, fenced or inside prose), else None."""
    if not isinstance(content, str) or not content.strip():
        return None
    for candidate in [content.strip(), *(m.group(1).strip() for m in _FENCE.finditer(content))]:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", content):
        try:
            value, _ = decoder.raw_decode(content, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _declared(answer: dict[str, Any]) -> list[tuple[str, str]] | None:
    """(original, replacement) pairs the model declared, normalized; None if malformed."""
    items = answer.get("corrections", [])
    if not isinstance(items, list):
        return None
    pairs: list[tuple[str, str]] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        original, replacement = item.get("original"), item.get("replacement")
        if isinstance(original, str) and isinstance(replacement, str):
            original, replacement = normalize(original), normalize(replacement)
            if original and replacement:
                pairs.append((original, replacement))
    return pairs


def _flagged_tokens(
    raw: str,
    tokens: list[Token],
    word_confidences: Sequence[float] | None,
    cfg: CorrectionConfig,
) -> list[bool]:
    """Which raw tokens stage 2 may look at: low confidence, or entity-like when none given."""
    words = list(re.finditer(r"\S+", raw))
    if word_confidences is not None and len(word_confidences) == len(words):
        flags = []
        w = 0
        for tok in tokens:
            while w < len(words) - 1 and words[w].end() <= tok.start:
                w += 1
            try:
                conf = float(word_confidences[w])
            except (TypeError, ValueError):
                conf = 0.0
            flags.append(conf < cfg.low_confidence)
        return flags
    if word_confidences is not None:
        log.debug("word_confidences do not match the %d words; using entity-like spans", len(words))
    flags = []
    for k, tok in enumerate(tokens):
        before = raw[tokens[k - 1].end : tok.start] if k else ""
        sentence_start = k == 0 or any(ch in before for ch in ".!?\n")
        capitalized = tok.text[:1].isupper() and not sentence_start
        flags.append(capitalized or tok.zipf < cfg.common_zipf)
    return flags


def _names_for_prompt(index: NameIndex, flagged: Sequence[str]) -> list[str]:
    """All names for small campaigns; the ones closest to the flagged spans for big ones."""
    names = list(index.keywords)
    if len(names) <= MAX_NAMES_IN_PROMPT:
        return names
    spans = [normalize(s) for s in flagged] or [""]

    def closeness(name: str) -> float:
        key = normalize(name)
        return max(JaroWinkler.similarity(key, s) for s in spans)

    return sorted(names, key=closeness, reverse=True)[:MAX_NAMES_IN_PROMPT]


def llm_corrections(
    raw: str,
    stage1_text: str,
    stage1: Sequence[Correction],
    settled: Sequence[tuple[int, int]],
    index: NameIndex,
    word_confidences: Sequence[float] | None,
    llm: LLMCorrector,
    config: CorrectionConfig | None = None,
) -> list[Correction]:
    """Stage-2 corrections with offsets into `raw`; [] whenever the model cannot be trusted."""
    cfg = config or CorrectionConfig()
    raw_tokens = tokenize(raw)
    if len(raw_tokens) < cfg.llm_min_words or not index:
        return []
    flags = _flagged_tokens(raw, raw_tokens, word_confidences, cfg)
    for k, tok in enumerate(raw_tokens):
        if flags[k] and any(s < tok.end and tok.start < e for s, e in settled):
            flags[k] = False
    flagged_spans = [tok.text for tok, flag in zip(raw_tokens, flags, strict=True) if flag]
    if not flagged_spans:
        return []

    # Map stage-1 text offsets back to raw offsets (stage 2 never touches stage-1 spans).
    shifts: list[tuple[int, int, int]] = []  # (start in stage1 text, end in stage1 text, delta)
    delta = 0
    for c in sorted(stage1, key=lambda c: c.start):
        s1 = c.start + delta
        delta += len(c.replacement) - (c.end - c.start)
        shifts.append((s1, s1 + len(c.replacement), delta))

    def to_raw(pos: int) -> int | None:
        d = 0
        for s1, e1, after in shifts:
            if pos >= e1:
                d = after
            elif pos > s1:
                return None  # inside a stage-1 replacement
        return pos - d

    answer = llm.ask(stage1_text, flagged_spans, _names_for_prompt(index, flagged_spans))
    if answer is None:
        return []
    new_text = answer.get("text", answer.get("corrected_text"))
    declared = _declared(answer)
    if not isinstance(new_text, str) or declared is None or not declared:
        return []
    old_tokens = tokenize(stage1_text)
    new_spans = _token_spans(new_text, tokenize(new_text))
    flagged_raw = [(t.start, t.end) for t, f in zip(raw_tokens, flags, strict=True) if f]
    results: list[Correction] = []
    taken: list[tuple[int, int]] = []
    # Only declared corrections are ever applied, each where its original stands in the
    # stage-1 text; everything else the model rewrote is ignored, i.e. reverted.
    for old_key, new_key in declared:
        new_span = new_spans.get(new_key)
        if new_span is None or "\n" in new_span:
            continue  # declared but not what the model's own text says
        score = JaroWinkler.similarity(old_key, new_key)
        if score < cfg.phonetic_threshold:
            continue  # declared but implausible: not what was heard
        for s1, e1 in _find_span(stage1_text, old_tokens, old_key):
            start, end = to_raw(s1), to_raw(e1)
            if start is None or end is None or start >= end:
                continue
            if any(s < end and start < e for s, e in [*settled, *taken]):
                continue  # stage 1 settled it, or another declared fix took it
            if not any(s < end and start < e for s, e in flagged_raw):
                continue  # outside the spans the model was allowed to touch
            if raw[start:end] == new_span:
                continue
            forms = index.by_joined.get(new_key)
            taken.append((start, end))
            results.append(
                Correction(
                    original=raw[start:end],
                    replacement=new_span,
                    start=start,
                    end=end,
                    score=round(score, 4),
                    method="llm",
                    entity=forms[0].canonical if forms else None,
                )
            )
    results.sort(key=lambda c: c.start)
    return results


MAX_SPAN_WORDS = 6


def _token_spans(text: str, tokens: list[Token]) -> dict[str, str]:
    """Every run of up to MAX_SPAN_WORDS words of `text`, keyed by its normalized form."""
    spans: dict[str, str] = {}
    for i in range(len(tokens)):
        for j in range(i, min(len(tokens), i + MAX_SPAN_WORDS)):
            span = text[tokens[i].start : tokens[j].end]
            spans.setdefault(normalize(span), span)
    return spans


def _find_span(text: str, tokens: list[Token], key: str) -> list[tuple[int, int]]:
    """Character spans of word runs of `text` whose normalized form is `key`."""
    found = []
    for i in range(len(tokens)):
        joined = ""
        for j in range(i, min(len(tokens), i + MAX_SPAN_WORDS)):
            joined += tokens[j].norm
            if joined == key:
                found.append((tokens[i].start, tokens[j].end))
            if len(joined) >= len(key):
                break
    return found
