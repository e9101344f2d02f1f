"""Campaigns: the scope of every other row."""

from __future__ import annotations

from typing import Any

from glyphoxa_pipelines.db.operations import (
    Op,
    execute,
    fetch_all,
    fetch_one,
    operation,
    read_operation,
)
from glyphoxa_pipelines.memory.errors import NotFoundError
from glyphoxa_pipelines.memory.models import Campaign
from glyphoxa_pipelines.memory.rows import from_row


class CampaignStore:
    def __init__(self, db: Any) -> None:
        self.db = db

    @operation
    def upsert(self, campaign: Campaign) -> Op:
        row = yield fetch_one(
            """INSERT INTO campaigns (id, name, description, system, review_threshold)
               VALUES (%s, %s, %s, %s, %s)
               ON CONFLICT (id) DO UPDATE SET
                   name = EXCLUDED.name, description = EXCLUDED.description,
                   system = EXCLUDED.system, review_threshold = EXCLUDED.review_threshold,
                   updated_at = now()
               WHERE (campaigns.name, campaigns.description, campaigns.system,
                      campaigns.review_threshold)
                     IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.description, EXCLUDED.system,
                                       EXCLUDED.review_threshold)
               RETURNING *""",
            (
                campaign.id,
                campaign.name,
                campaign.description,
                campaign.system,
                campaign.review_threshold,
            ),
        )
        if row is None:  # unchanged
            row = yield fetch_one("SELECT * FROM campaigns WHERE id = %s", (campaign.id,))
        return from_row(Campaign, row)

    @read_operation
    def get(self, campaign_id: str) -> Op:
        row = yield fetch_one("SELECT * FROM campaigns WHERE id = %s", (campaign_id,))
        return from_row(Campaign, row) if row else None

    @operation
    def require(self, campaign_id: str) -> Op:
        row = yield fetch_one("SELECT * FROM campaigns WHERE id = %s", (campaign_id,))
        if row is None:
            raise NotFoundError(f"unknown campaign {campaign_id!r}")
        return from_row(Campaign, row)

    @read_operation
    def list(self) -> Op:
        rows = yield fetch_all("SELECT * FROM campaigns ORDER BY id")
        return [from_row(Campaign, r) for r in rows]

    @operation
    def delete(self, campaign_id: str) -> Op:
        n = yield execute("DELETE FROM campaigns WHERE id = %s", (campaign_id,))
        return n > 0

    @operation
    def set_active_embedding_model(self, campaign_id: str, model: str) -> Op:
        """Switch the model queries use, atomically, once every chunk has an embedding."""
        missing = yield fetch_one(
            """SELECT count(*) AS n FROM chunks c
               WHERE c.campaign_id = %s AND NOT EXISTS (
                   SELECT 1 FROM chunk_embeddings e
                   WHERE e.campaign_id = c.campaign_id AND e.chunk_id = c.id AND e.model = %s)""",
            (campaign_id, model),
        )
        if missing["n"]:
            raise ValueError(
                f"campaign {campaign_id!r}: {missing['n']} chunks have no {model!r} embedding "
                "yet; finish the backfill before switching"
            )
        n = yield execute(
            "UPDATE campaigns SET active_embedding_model = %s, updated_at = now() WHERE id = %s",
            (model, campaign_id),
        )
        if not n:
            raise NotFoundError(f"unknown campaign {campaign_id!r}")
