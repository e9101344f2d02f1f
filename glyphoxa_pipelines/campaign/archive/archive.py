"""Export a campaign to one archive file, import one into this home."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from glyphoxa_pipelines.campaign.archive.bundle import read_bundle, table_member, write_bundle
from glyphoxa_pipelines.campaign.archive.dump import CampaignDump, audio_files
from glyphoxa_pipelines.campaign.archive.restore import CampaignRestore, RestoreReport


def export_campaign(db: Any, campaign_id: str, path: Path) -> dict[str, int]:
    """Write `campaign_id` to `path` (gzip tar); rows per table."""
    tables, models, schema_version = CampaignDump(db).rows(campaign_id)
    members = {f"tables/{name}.jsonl": table_member(rows) for name, rows in tables.items()}
    for name, file in audio_files(tables).items():
        members[name] = file.read_bytes()
    manifest = {
        "campaign": campaign_id,
        "schema_version": schema_version,
        "exported_at": datetime.now(UTC).isoformat(),
        "embedding_models": models,
        "rows": {name: len(rows) for name, rows in tables.items()},
    }
    write_bundle(path, manifest, members)
    return manifest["rows"]


def import_campaign(db: Any, path: Path, as_id: str | None, audio_dir: Path) -> RestoreReport:
    """Check the whole archive, then restore it in one transaction (see `restore`)."""
    return CampaignRestore(db).restore(read_bundle(path), as_id, audio_dir)
