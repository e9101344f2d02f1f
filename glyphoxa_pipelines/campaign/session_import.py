"""Write an imported transcript into L1 as an ended session (so the sensor picks it up).

Re-importing the same file is a no-op, and a file that only grew adds its new entries. A file
whose earlier entries changed (an edited line shifts every later position-based key) is
refused, naming the changed lines, unless the import is asked to replace: then the session's
entries are deleted and the new version written in the same transaction, so readers see the
old version or the new one, never a mix. `raw_text` stays immutable: entries are replaced as
rows, never rewritten in place.

The timeline: a file that dates its lines keeps its dates. One that does not (plain text,
SRT offsets, CRD3) gets its start from the importer: `started_at` when told, else its
`session_number`'s week counted from `DEFAULT_START`, else a week after the campaign's latest
session, so episodes imported in order get increasing starts and "last session", the story
so far and "the newer fact wins" read them in that order. A re-import keeps the session's
start, so its lines keep their times and the import stays a no-op.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from glyphoxa_pipelines.campaign.transcript_import import (
    DEFAULT_START,
    ImportedTranscript,
    TranscriptFormat,
    TranscriptImportError,
    import_transcript,
)
from glyphoxa_pipelines.db.operations import Op, execute, fetch_all, fetch_one
from glyphoxa_pipelines.memory import CampaignStore, NewEntry, Session, SessionStore
from glyphoxa_pipelines.memory.ids import slugify

_SHOWN = 10  # changed lines named in a refusal; the rest are counted
SESSION_INTERVAL = timedelta(days=7)  # a weekly game: the gap between undated sessions


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


def next_start_op(campaign_id: str, session_id: str, session_number: int | None) -> Op[datetime]:
    """Where an undated transcript goes in the timeline (see the module's docstring)."""
    if session_number is not None:
        return DEFAULT_START + (session_number - 1) * SESSION_INTERVAL
    row = yield fetch_one(
        "SELECT max(started_at) AS latest FROM sessions WHERE campaign_id = %s AND id <> %s",
        (campaign_id, session_id),
    )
    latest = row["latest"] if row else None
    return latest + SESSION_INTERVAL if latest is not None else DEFAULT_START


def undated_start_op(campaign_id: str, session_id: str, session_number: int | None
                     ) -> Op[datetime]:
    """The session's stored start (a re-import keeps its place), else `next_start_op`."""
    row = yield fetch_one(
        "SELECT started_at FROM sessions WHERE id = %s AND campaign_id = %s",
        (session_id, campaign_id),
    )
    if row is not None:
        return row["started_at"]
    return (yield from next_start_op(campaign_id, session_id, session_number))


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
    session_number: int | None = None,
) -> SessionImport:
    """Parse the whole file first (a bad file raises TranscriptFormatError), then create the
    session, write every entry and end it in one transaction: all or nothing. An earlier,
    different version in the session raises TranscriptChangedError, or with `replace` is
    replaced in the same transaction. `start_at` / `session_number` place an undated file in
    the timeline (see the module's docstring)."""
    if session_number is not None and session_number < 1:
        raise TranscriptImportError(f"session number must be 1 or more, not {session_number}")
    p = Path(path)
    sid = session_id or session_id_for(campaign_id, p)
    transcript = import_transcript(p, format=format, start_at=start_at, dm_speakers=dm_speakers)
    if not transcript.absolute_times and start_at is None:
        start_at = db.run(undated_start_op(campaign_id, sid, session_number), transaction=False)
        transcript = import_transcript(
            p, format=format, start_at=start_at, dm_speakers=dm_speakers
        )
    if title is None and session_number is not None:
        title = f"Session {session_number}: {p.stem}"
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
