"""Dynamic partitions: one key per game session, one per campaign.

Session ids are global slugs (no commas), so they are valid partition keys as they are; there is
deliberately no campaign x session multi-partition (its cross product is mostly invalid).
"""

from __future__ import annotations

from dagster import DynamicPartitionsDefinition

SESSIONS = "sessions"
CAMPAIGNS = "campaigns"

sessions_partitions = DynamicPartitionsDefinition(name=SESSIONS)
campaigns_partitions = DynamicPartitionsDefinition(name=CAMPAIGNS)
