"""Import past sessions' transcripts into L1 entries.

Formats: JSONL (one entry per line), plain text (`Speaker: text` lines, optional `[hh:mm:ss]`
prefix), SRT and WebVTT (Whisper output; Craig recordings with `<v Speaker>` voice tags or
`Speaker: text` cues), and CRD3 JSON (`TURNS` of `NAMES`/`UTTERANCES`, no timestamps: they are
synthesized at a realistic speaking rate so time-based chunking and hot context still work).

A bad file raises TranscriptFormatError naming `file:line` and the problem, and nothing is
returned: an import is all or nothing, so a half-imported session never reaches the pipeline.
Idempotency keys are derived from positions in the file, so importing the same file twice
writes each entry once.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from glyphoxa_pipelines.campaign.input_file import InputFileError, read_input_text
from glyphoxa_pipelines.memory.limits import (
    MAX_TEXT_CHARS,
    LimitError,
    as_real,
    check_duration,
    check_id,
    check_name,
    check_offset,
    check_text,
    check_timestamp,
)
from glyphoxa_pipelines.memory.models import Entry, NewEntry, SpeakerRole

TranscriptFormat = Literal["jsonl", "text", "srt", "vtt", "crd3"]
FORMATS: tuple[str, ...] = ("jsonl", "text", "srt", "vtt", "crd3")

# A fixed default session start keeps synthetic timestamps (and so re-imports) deterministic.
DEFAULT_START = datetime(2020, 1, 1, 19, 0, tzinfo=UTC)
WORDS_PER_SECOND = 2.6  # ~155 wpm, conversational speech at a game table
TURN_GAP_S = 0.4
MIN_TURN_S = 0.6
DM_NAMES = frozenset({"dm", "gm", "dungeon master", "game master", "narrator"})
_ROLE_ALIASES: dict[str, SpeakerRole] = {
    "dm": "dm",
    "gm": "dm",
    "narrator": "dm",
    "dungeon master": "dm",
    "game master": "dm",
    "player": "player",
    "pc": "player",
    "npc": "npc",
    "system": "system",
    "bot": "npc",
}


class TranscriptImportError(Exception):
    """Base of transcript import failures (not Python's ImportError, which is about modules)."""


class TranscriptFormatError(TranscriptImportError, ValueError):
    """A transcript file is malformed; `location` is `file:line`."""

    def __init__(self, source: str, line: int | None, problem: str) -> None:
        self.source = source
        self.line = line
        self.problem = problem
        self.location = f"{source}:{line}" if line is not None else source
        super().__init__(f"{self.location}: {problem}")


@dataclass(frozen=True, slots=True)
class ImportedTranscript:
    """The entries of one transcript file, ready for the session log."""

    format: TranscriptFormat
    source: str
    entries: list[NewEntry]
    speakers: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # each entry's line (CRD3: turn index)
    # Whether the file dated its lines itself (absolute timestamps); otherwise every time is
    # the import's start plus an offset, and the session's place in the timeline is the
    # importer's choice (`session_import.next_start`).
    absolute_times: bool = False

    @property
    def duration_s(self) -> float:
        times = [e.spoken_at for e in self.entries if e.spoken_at is not None]
        if not times:
            return 0.0
        last = self.entries[-1]
        return (max(times) - min(times)).total_seconds() + last.duration_s

    def as_entries(self, campaign_id: str, session_id: str, first_id: int = 1) -> list[Entry]:
        """Stored-looking entries without a database: for in-memory pipelines, tests, benches."""
        return [
            Entry(
                id=first_id + n,
                campaign_id=campaign_id,
                session_id=session_id,
                idempotency_key=e.idempotency_key,
                speaker_id=e.speaker_id,
                speaker_name=e.speaker_name,
                speaker_role=e.speaker_role,
                raw_text=e.raw_text if e.raw_text is not None else e.text,
                text=e.text,
                npc_id=e.npc_id,
                spoken_at=e.spoken_at or DEFAULT_START,
                duration_s=e.duration_s,
                word_confidences=e.word_confidences,
                corrections=list(e.corrections),
                corrector_version=e.corrector_version,
            )
            for n, e in enumerate(self.entries)
        ]


def speaker_slug(name: str) -> str:
    """Stable speaker id from a display name."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug or "unknown"


def speaking_duration(text: str) -> float:
    """Seconds it takes to say `text` at table speed."""
    return max(MIN_TURN_S, len(text.split()) / WORDS_PER_SECOND)


class _Builder:
    """Accumulates entries, assigning roles and filling missing times from speaking rate."""

    def __init__(self, source: str, start_at: datetime, dm_speakers: set[str]) -> None:
        self.source = source
        self.start_at = start_at
        self.dm_speakers = {s.lower() for s in dm_speakers} | DM_NAMES
        self.entries: list[NewEntry] = []
        self.lines: list[int] = []
        self.absolute_times = False
        self.clock = start_at

    def role_for(self, speaker: str, given: Any, line: int) -> SpeakerRole:
        if given not in (None, ""):
            role = _ROLE_ALIASES.get(str(given).strip().lower())
            if role is None:
                raise TranscriptFormatError(
                    self.source, line, f"unknown speaker role {given!r} (use dm/player/npc/system)"
                )
            return role
        return "dm" if speaker.strip().lower() in self.dm_speakers else "player"

    def at(self, seconds: float, line: int, what: str = "time offset") -> datetime:
        """The session start plus `seconds`, refused (with the line) when out of range."""
        try:
            check_offset(seconds, what)
            return check_timestamp(self.start_at + timedelta(seconds=seconds), what)
        except (LimitError, OverflowError) as exc:
            raise TranscriptFormatError(self.source, line, str(exc)) from None

    def _check(
        self, line: int, *, key: str, speaker: str, text: str, raw_text: str | None,
        speaker_id: str | None, npc_id: str | None, spoken_at: datetime, duration_s: float,
    ) -> None:
        """The shared limits, once, at the boundary: what passes here the store can hold."""
        try:
            check_id(key, "idempotency key")
            check_name(speaker, "speaker")
            check_text(text, "text", MAX_TEXT_CHARS)
            if raw_text is not None:
                check_text(raw_text, "raw_text", MAX_TEXT_CHARS)
            for what, value in (("speaker_id", speaker_id), ("npc_id", npc_id)):
                if value is not None:
                    check_id(value, what)
            check_timestamp(spoken_at, "timestamp")
            check_duration(duration_s, "duration")
        except LimitError as exc:
            raise TranscriptFormatError(self.source, line, str(exc)) from None

    def add(
        self,
        *,
        key: str,
        line: int,
        speaker: str,
        text: str,
        role: Any = None,
        spoken_at: datetime | None = None,
        duration_s: float | None = None,
        speaker_id: str | None = None,
        npc_id: str | None = None,
        raw_text: str | None = None,
        word_confidences: list[float] | None = None,
    ) -> None:
        speaker = speaker.strip() or "Unknown"
        text = " ".join(text.split())
        if duration_s is None:
            duration_s = speaking_duration(text)
        if duration_s < 0:
            raise TranscriptFormatError(self.source, line, f"negative duration {duration_s}")
        if spoken_at is None:
            spoken_at = self.clock
        self._check(
            line, key=key, speaker=speaker, text=text, raw_text=raw_text,
            speaker_id=speaker_id, npc_id=npc_id, spoken_at=spoken_at, duration_s=duration_s,
        )
        self.clock = max(self.clock, spoken_at + timedelta(seconds=duration_s + TURN_GAP_S))
        self.lines.append(line)
        self.entries.append(
            NewEntry(
                idempotency_key=key,
                text=text,
                raw_text=raw_text,
                speaker_id=speaker_id or speaker_slug(speaker),
                speaker_name=speaker,
                speaker_role=self.role_for(speaker, role, line),
                npc_id=npc_id,
                spoken_at=spoken_at,
                duration_s=round(float(duration_s), 3),
                word_confidences=word_confidences,
            )
        )

    def result(self, fmt: TranscriptFormat) -> ImportedTranscript:
        if not self.entries:
            raise TranscriptFormatError(self.source, None, f"no transcript entries found ({fmt})")
        speakers = list(dict.fromkeys(e.speaker_name for e in self.entries))
        return ImportedTranscript(
            fmt, self.source, self.entries, speakers, self.lines, self.absolute_times
        )


def _aware(dt: datetime) -> datetime:
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


# ---------------------------------------------------------------------------------- detection


def detect_format(text: str, name: str = "") -> TranscriptFormat:
    """Guess the format from content first (extensions lie), then the file extension."""
    stripped = text.lstrip("\ufeff \t\r\n")
    suffix = Path(name).suffix.lower()
    if stripped.startswith("WEBVTT"):
        return "vtt"
    lines = [ln.strip() for ln in stripped.splitlines()[:3]]
    if len(lines) >= 2 and lines[0].isdigit() and "-->" in lines[1]:
        return "srt"
    if stripped.startswith("{") or stripped.startswith("["):
        first_line = stripped.splitlines()[0].strip() if stripped else ""
        try:
            json.loads(first_line)
            single_line_json = True
        except (ValueError, RecursionError):
            single_line_json = False
        if '"TURNS"' in stripped[:200_000] and (suffix == ".json" or not single_line_json):
            return "crd3"
        if single_line_json and stripped.startswith("{"):
            return "jsonl"
        return "crd3" if suffix == ".json" else "jsonl"
    by_suffix: dict[str, TranscriptFormat] = {
        ".jsonl": "jsonl",
        ".ndjson": "jsonl",
        ".srt": "srt",
        ".vtt": "vtt",
        ".json": "crd3",
    }
    return by_suffix.get(suffix, "text")


# -------------------------------------------------------------------------------------- JSONL

_JSONL_SPEAKER = ("speaker", "speaker_name", "name", "user")
_JSONL_TIME = ("timestamp", "spoken_at", "time", "datetime")
_JSONL_OFFSET = ("offset", "offset_s", "start", "start_s")
_JSONL_DURATION = ("duration", "duration_s")


def _first(obj: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if key in obj and obj[key] is not None:
            return obj[key]
    return None


def _parse_time_value(value: Any, b: _Builder, line: int) -> datetime:
    b.absolute_times = True
    if isinstance(value, bool):
        raise TranscriptFormatError(b.source, line, f"bad timestamp {value!r}")
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(float(value), tz=UTC)
        except (OverflowError, OSError, ValueError):
            problem = f"timestamp {value!r} is out of range"
            raise TranscriptFormatError(b.source, line, problem) from None
    if isinstance(value, str):
        try:
            return _aware(datetime.fromisoformat(value.strip().replace("Z", "+00:00")))
        except ValueError:
            pass
    raise TranscriptFormatError(b.source, line, f"bad timestamp {value!r} (want ISO 8601)")


def _number(value: Any, what: str, b: _Builder, line: int) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TranscriptFormatError(b.source, line, f"bad {what} {value!r}")
    try:
        return float(value)
    except ValueError:
        raise TranscriptFormatError(b.source, line, f"bad {what} {value!r}") from None


def _parse_jsonl(text: str, b: _Builder) -> ImportedTranscript:
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TranscriptFormatError(b.source, line_no, f"invalid JSON: {exc.msg}") from None
        except RecursionError:
            raise TranscriptFormatError(b.source, line_no, "JSON nested too deeply") from None
        if not isinstance(obj, dict):
            raise TranscriptFormatError(b.source, line_no, "each line must be a JSON object")
        body = obj.get("text")
        if not isinstance(body, str):
            raise TranscriptFormatError(b.source, line_no, "missing or non-string 'text'")
        if not body.strip():
            continue
        speaker = _first(obj, _JSONL_SPEAKER)
        if not isinstance(speaker, str) or not speaker.strip():
            raise TranscriptFormatError(b.source, line_no, "missing 'speaker'")
        spoken_at = None
        if (value := _first(obj, _JSONL_TIME)) is not None:
            spoken_at = _parse_time_value(value, b, line_no)
        elif (value := _first(obj, _JSONL_OFFSET)) is not None:
            spoken_at = b.at(_number(value, "offset", b, line_no), line_no, "offset")
        duration = None
        if (value := _first(obj, _JSONL_DURATION)) is not None:
            duration = _number(value, "duration", b, line_no)
        confidences = obj.get("word_confidences")
        if confidences is not None and not (
            isinstance(confidences, list)
            and all(isinstance(c, int | float) and not isinstance(c, bool) for c in confidences)
        ):
            raise TranscriptFormatError(b.source, line_no, "'word_confidences' must be numbers")
        b.add(
            key=str(obj.get("idempotency_key") or f"import:{line_no}"),
            line=line_no,
            speaker=speaker,
            text=body,
            role=_first(obj, ("role", "speaker_role")),
            spoken_at=spoken_at,
            duration_s=duration,
            speaker_id=obj.get("speaker_id") or None,
            npc_id=obj.get("npc_id") or None,
            raw_text=obj.get("raw_text") if isinstance(obj.get("raw_text"), str) else None,
            word_confidences=[as_real(c) for c in confidences] if confidences else None,
        )
    return b.result("jsonl")


# --------------------------------------------------------------------------------- plain text

_TEXT_TIME = re.compile(r"^\[?(?P<ts>\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?)\]?\s+")
_SPEAKER_LINE = re.compile(r"^(?P<speaker>[^\s:][^:]{0,47}?)\s*:\s+(?P<text>\S.*)$")


def _clock_seconds(value: str) -> float:
    parts = value.replace(",", ".").split(":")
    seconds = 0.0
    for part in parts:
        seconds = seconds * 60 + float(part)
    return seconds


def _parse_text(text: str, b: _Builder) -> ImportedTranscript:
    current: dict[str, Any] | None = None

    def flush() -> None:
        if current is not None:
            b.add(**current)

    for line_no, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        spoken_at = None
        if m := _TEXT_TIME.match(stripped):
            spoken_at = b.at(_clock_seconds(m.group("ts")), line_no)
            stripped = stripped[m.end() :]
        m = _SPEAKER_LINE.match(stripped)
        if m and len(m.group("speaker").split()) <= 4:
            flush()
            current = {
                "key": f"import:{line_no}",
                "line": line_no,
                "speaker": m.group("speaker"),
                "text": m.group("text"),
                "spoken_at": spoken_at,
            }
        elif current is not None and spoken_at is None:
            current["text"] += " " + stripped  # a wrapped continuation of the previous turn
        else:
            raise TranscriptFormatError(
                b.source, line_no, f"expected 'Speaker: text', got {stripped[:60]!r}"
            )
    flush()
    return b.result("text")


# ---------------------------------------------------------------------------------- SRT / VTT

_CUE_TIME = re.compile(
    r"^(?P<a>(?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3})\s*-->\s*(?P<b>(?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3})"
    r"(?:\s+.*)?$"
)
_VOICE = re.compile(r"<v(?:\.[\w.-]+)?\s+(?P<speaker>[^>]+)>(?P<text>.*?)(?:</v>|(?=<v[\s.])|$)")
_TAG = re.compile(r"</?[a-zA-Z][^>]*>|</?\d[^>]*>")
_BRACKET_SPEAKER = re.compile(r"^\[(?P<speaker>[^\]]{1,48})\]\s*(?P<text>.*)$")


def _cue_parts(lines: list[str]) -> list[tuple[str, str]]:
    """(speaker, text) pieces of one cue: voice tags, `Speaker:` or `[Speaker]` prefixes."""
    joined = " ".join(lines)
    if "<v" in joined:
        parts = []
        for m in _VOICE.finditer(joined):
            body = _TAG.sub("", m.group("text")).strip()
            if body:
                parts.append((m.group("speaker").strip(), body))
        if parts:
            return parts
    parts = []
    for line in lines:
        clean = _TAG.sub("", line).strip()
        if not clean:
            continue
        if line.lstrip().startswith("- ") and parts:  # dialogue dash: same cue, next voice
            clean = clean[2:].strip()
        m = _SPEAKER_LINE.match(clean) or _BRACKET_SPEAKER.match(clean)
        if m and len(m.group("speaker").split()) <= 4:
            parts.append((m.group("speaker").strip(), m.group("text").strip()))
        elif parts:
            speaker, body = parts[-1]
            parts[-1] = (speaker, f"{body} {clean}")
        else:
            parts.append(("", clean))
    return [(s, t) for s, t in parts if t]


def _parse_cues(text: str, b: _Builder, fmt: Literal["srt", "vtt"]) -> ImportedTranscript:
    lines = text.splitlines()
    i = 0
    if fmt == "vtt":
        if not lines or not lines[0].lstrip("\ufeff").startswith("WEBVTT"):
            raise TranscriptFormatError(b.source, 1, "WebVTT file must start with 'WEBVTT'")
        i = 1
        while i < len(lines) and lines[i].strip():  # header block
            i += 1
    last_speaker = ""
    cues = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        block_start = i
        block: list[str] = []
        while i < len(lines) and lines[i].strip():
            block.append(lines[i])
            i += 1
        head = block[0].strip()
        if fmt == "vtt" and (head.startswith(("NOTE", "STYLE", "REGION"))):
            continue
        timing_idx = next((k for k, ln in enumerate(block[:2]) if "-->" in ln), None)
        if timing_idx is None and fmt == "srt" and head.isdigit() and len(block) > 1:
            raise TranscriptFormatError(
                b.source, block_start + 2, f"bad cue timing {block[1].strip()[:60]!r}"
            )
        if timing_idx is None:
            raise TranscriptFormatError(
                b.source, block_start + 1, f"cue without a timing line: {head[:60]!r}"
            )
        if fmt == "srt" and timing_idx == 1 and not head.isdigit():
            raise TranscriptFormatError(
                b.source, block_start + 1, f"SRT cue number expected, got {head[:40]!r}"
            )
        line_no = block_start + timing_idx + 1
        m = _CUE_TIME.match(block[timing_idx].strip())
        if not m:
            raise TranscriptFormatError(
                b.source, line_no, f"bad cue timing {block[timing_idx].strip()[:60]!r}"
            )
        start, end = _clock_seconds(m.group("a")), _clock_seconds(m.group("b"))
        if end < start:
            raise TranscriptFormatError(b.source, line_no, "cue ends before it starts")
        cues += 1
        parts = _cue_parts(block[timing_idx + 1 :])
        span = (end - start) / max(1, len(parts))
        for n, (speaker, body) in enumerate(parts):
            speaker = speaker or last_speaker or "Unknown"
            last_speaker = speaker
            b.add(
                key=f"import:{line_no}" + (f":{n}" if n else ""),
                line=line_no,
                speaker=speaker,
                text=body,
                spoken_at=b.at(start + n * span, line_no, "cue time"),
                duration_s=span,
            )
    if cues == 0:
        raise TranscriptFormatError(b.source, None, f"no cues found ({fmt})")
    return b.result(fmt)


# --------------------------------------------------------------------------------------- CRD3


def _parse_crd3(text: str, b: _Builder) -> ImportedTranscript:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TranscriptFormatError(b.source, exc.lineno, f"invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise TranscriptFormatError(b.source, None, "JSON nested too deeply") from None
    turns = data.get("TURNS") if isinstance(data, dict) else data
    if not isinstance(turns, list):
        raise TranscriptFormatError(b.source, 1, "CRD3 JSON needs a 'TURNS' list")
    for n, turn in enumerate(turns):
        if not isinstance(turn, dict):
            raise TranscriptFormatError(b.source, None, f"turn #{n} is not an object")
        names, utterances = turn.get("NAMES"), turn.get("UTTERANCES")
        if not isinstance(names, list) or not all(isinstance(x, str) for x in names) or not names:
            raise TranscriptFormatError(b.source, None, f"turn #{n}: 'NAMES' must list speakers")
        if not isinstance(utterances, list) or not all(isinstance(x, str) for x in utterances):
            raise TranscriptFormatError(b.source, None, f"turn #{n}: 'UTTERANCES' must be strings")
        body = " ".join(u.strip() for u in utterances).strip()
        if not body:
            continue
        number = turn.get("NUMBER", n)
        speaker = ", ".join(x.strip() for x in names)
        role = "dm" if all(x.strip().lower() in b.dm_speakers for x in names) else "player"
        b.add(key=f"import:turn:{number}", line=n, speaker=speaker, text=body, role=role)
    return b.result("crd3")


# ----------------------------------------------------------------------------------- entry API


def parse_transcript(
    text: str,
    *,
    source: str = "<transcript>",
    format: TranscriptFormat | None = None,
    dm_speakers: set[str] | frozenset[str] | None = None,
    start_at: datetime | None = None,
) -> ImportedTranscript:
    """Parse transcript text; `format` is detected when not given.

    `dm_speakers` names the speakers whose role is `dm` (CRD3 default: MATT). Entries without
    times get synthetic ones from `start_at` at a realistic speaking rate.
    """
    fmt = format or detect_format(text, source)
    if fmt not in FORMATS:
        raise TranscriptFormatError(source, None, f"unknown format {fmt!r} (one of {FORMATS})")
    if dm_speakers is None:
        dm_speakers = {"MATT"} if fmt == "crd3" else set()
    builder = _Builder(source, _aware(start_at or DEFAULT_START), set(dm_speakers))
    if fmt == "jsonl":
        return _parse_jsonl(text, builder)
    if fmt == "text":
        return _parse_text(text, builder)
    if fmt in ("srt", "vtt"):
        return _parse_cues(text, builder, fmt)
    return _parse_crd3(text, builder)


def import_transcript(
    path: str | Path,
    *,
    format: TranscriptFormat | None = None,
    dm_speakers: set[str] | frozenset[str] | None = None,
    start_at: datetime | None = None,
) -> ImportedTranscript:
    """Read and parse a transcript file; see `parse_transcript`."""
    try:
        text = read_input_text(path, encoding="utf-8-sig")
    except InputFileError as exc:
        raise TranscriptFormatError(exc.source, exc.line, exc.problem) from None
    return parse_transcript(
        text, source=str(path), format=format, dm_speakers=dm_speakers, start_at=start_at
    )
