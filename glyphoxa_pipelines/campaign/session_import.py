"""Write an imported transcript into L1 as an ended session (so the sensor picks it up).

Re-importing the same file is a no-op, and a file that only grew adds its new entries. A file
whose earlier entries changed (an edited line shifts every later position-based key) is
refused, naming the changed lines, unless the import is asked to replace: then the session's
entries are deleted and the new version written in the same transaction, so readers see the
old version or the new one, never a mix. `raw_text` stays immutable: entries are replaced as
rows, never rewritten in place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from glyphoxa_pipelines.campaign.transcript_import import (
    ImportedTranscript,
    TranscriptFormat,
    TranscriptImportError,
    import_transcript,
)
from glyphoxa_pipelines.db.operations import Op, execute, fetch_all, fetch_one
from glyphoxa_pipelines.memory import CampaignStore, NewEntry, Session, SessionStore
from glyphoxa_pipelines.memory.ids import slugify

_SHOWN = 10  # changed lines named in a refusal; the rest are counted


class TranscriptChangedError(TranscriptImportError):
    """The session already holds a different version of this transcript."""


@dataclass(frozen=True)
class SessionImport:
    session: Session
    transcript: ImportedTranscript
    written: int  # new rows; 0 when the same file was imported before
    replaced: int = 0  # rows of an earlier version deleted by a replacing import


def session_id_for(campaign_id: str, path: Path) -> str:
    """Deterministic session id from the file name, so re-importing a file is idempotent."""
    return f"{campaign_id}--{slugify(path.stem)}"


def _same(row: Mapping[str, Any], e: NewEntry) -> bool:
    """Does the stored entry say what the file's entry says? `text` is left out: the pipeline
    corrects it; `raw_text` is what the file gave. Durations are `real` in the store."""
    return (
        row["raw_text"] == (e.raw_text if e.raw_text is not None else e.text)
        and row["speaker_name"] == e.speaker_name
        and row["speaker_id"] == e.speaker_id
        and row["speaker_role"] == e.speaker_role
        and row["npc_id"] == e.npc_id
        and (e.spoken_at is None or row["spoken_at"] == e.spoken_at)
        and abs(row["duration_s"] - e.duration_s) <= 1e-3 * max(1.0, e.duration_s)
    )


def changed_entries(
    stored: Sequence[Mapping[str, Any]], transcript: ImportedTranscript
) -> tuple[list[str], list[str]]:
    """(where the file's entries differ from the stored ones, stored keys gone from the file)."""
    unit = "turn" if transcript.format == "crd3" else "line"
    lines = transcript.lines or list(range(1, len(transcript.entries) + 1))
    new = {e.idempotency_key: (e, line) for e, line in zip(transcript.entries, lines, strict=True)}
    changed: list[str] = []
    gone: list[str] = []
    for row in stored:
        hit = new.get(row["idempotency_key"])
        if hit is None:
            gone.append(row["idempotency_key"])
        elif not _same(row, hit[0]):
            changed.append(f"{unit} {hit[1]}")
    return changed, gone


def _listing(items: list[str]) -> str:
    more = f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
    return ", ".join(items[:_SHOWN]) + more


def _refusal(source: str, sid: str, stored: int, changed: list[str], gone: list[str]) -> str:
    parts = []
    if changed:
        parts.append(f"changed: {_listing(changed)}")
    if gone:
        parts.append(f"no longer in the file: {_listing(gone)}")
    return (
        f"{source}: session {sid!r} already holds another version of this transcript "
        f"({stored} entries); {'; '.join(parts)}. Nothing was imported; use --replace to "
        "replace the session's entries with this file in one transaction"
    )


def import_session(
    db: Any,
    campaign_id: str,
    path: str | Path,
    *,
    session_id: str | None = None,
    title: str | None = None,
    format: TranscriptFormat | None = None,  # noqa: A002 - mirrors import_transcript
    start_at: datetime | None = None,
    dm_speakers: set[str] | None = None,
    replace: bool = False,
) -> SessionImport:
    """Parse the whole file first (a bad file raises TranscriptFormatError), then create the
    session, write every entry and end it in one transaction: all or nothing. An earlier,
    different version in the session raises TranscriptChangedError, or with `replace` is
    replaced in the same transaction."""
    p = Path(path)
    transcript = import_transcript(p, format=format, start_at=start_at, dm_speakers=dm_speakers)
    sid = session_id or session_id_for(campaign_id, p)
    first = min((e.spoken_at for e in transcript.entries if e.spoken_at), default=start_at)
    log = SessionStore(db)

    def one_transaction() -> Op:
        yield from CampaignStore.require.op(CampaignStore(db), campaign_id)
        existing = yield fetch_one(
            "SELECT campaign_id, status FROM sessions WHERE id = %s FOR UPDATE", (sid,)
        )
        replaced = 0
        if existing is not None and existing["campaign_id"] == campaign_id:
            stored = yield fetch_all(
                """SELECT idempotency_key, raw_text, speaker_id, speaker_name, speaker_role,
                          npc_id, spoken_at, duration_s
                   FROM session_entries WHERE session_id = %s ORDER BY id""",
                (sid,),
            )
            changed, gone = changed_entries(stored, transcript)
            if (changed or gone) and not replace:
                raise TranscriptChangedError(_refusal(str(p), sid, len(stored), changed, gone))
            if changed or gone:
                if existing["status"] == "live":
                    raise TranscriptChangedError(
                        f"{p}: session {sid!r} is live; end it before replacing its entries"
                    )
                replaced = yield execute(
                    "DELETE FROM session_entries WHERE session_id = %s", (sid,)
                )
                yield execute(
                    """UPDATE sessions SET started_at = coalesce(%s, started_at),
                           ended_at = NULL, updated_at = now() WHERE id = %s""",
                    (first, sid),
                )
        yield from SessionStore.start_session.op(
            log, campaign_id, sid, title=title or p.stem, started_at=first
        )
        written = yield from SessionStore.write_entries.op(log, sid, transcript.entries)
        session = yield from SessionStore.end_session.op(log, sid)
        return SessionImport(session, transcript, written, replaced)

    return db.run(one_transaction())
