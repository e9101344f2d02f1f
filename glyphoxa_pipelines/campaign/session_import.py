"""Write an imported transcript into L1 as an ended session (so the sensor picks it up)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from glyphoxa_pipelines.campaign.transcript_import import (
    ImportedTranscript,
    TranscriptFormat,
    import_transcript,
)
from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import CampaignStore, Session, SessionStore
from glyphoxa_pipelines.memory.ids import slugify


@dataclass(frozen=True)
class SessionImport:
    session: Session
    transcript: ImportedTranscript
    written: int  # new rows; 0 when the same file was imported before


def session_id_for(campaign_id: str, path: Path) -> str:
    """Deterministic session id from the file name, so re-importing a file is idempotent."""
    return f"{campaign_id}--{slugify(path.stem)}"


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
) -> SessionImport:
    """Parse the whole file first (a bad file raises TranscriptFormatError), then create the
    session, write every entry and end it in one transaction: all or nothing."""
    p = Path(path)
    transcript = import_transcript(p, format=format, start_at=start_at, dm_speakers=dm_speakers)
    sid = session_id or session_id_for(campaign_id, p)
    first = min((e.spoken_at for e in transcript.entries if e.spoken_at), default=start_at)
    log = SessionStore(db)

    def one_transaction() -> Op:
        yield from CampaignStore.require.op(CampaignStore(db), campaign_id)
        yield from SessionStore.start_session.op(
            log, campaign_id, sid, title=title or p.stem, started_at=first
        )
        written = yield from SessionStore.write_entries.op(log, sid, transcript.entries)
        session = yield from SessionStore.end_session.op(log, sid)
        return SessionImport(session, transcript, written)

    return db.run(one_transaction())
