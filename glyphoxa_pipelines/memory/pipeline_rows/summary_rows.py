"""Summary and recap material: the campaign's session summaries in order, a session's
strongest public facts as sentences, and the episode's participation links the summary step
rebuilds."""

from __future__ import annotations

from glyphoxa_pipelines.db.operations import Op, execute, fetch_all
from glyphoxa_pipelines.memory.pipeline_rows.ownership import pipeline_fact


def campaign_summaries_op(campaign_id: str) -> Op:
    rows = yield fetch_all(
        """SELECT s.id, s.title, s.started_at, ss.summary, ss.key_points, ss.method
           FROM sessions s JOIN session_summaries ss ON ss.session_id = s.id
           WHERE s.campaign_id = %s ORDER BY s.started_at, s.id""",
        (campaign_id,),
    )
    return rows


def session_fact_sentences_op(session_id: str, limit: int = 8) -> Op:
    """The session's strongest current, public, canon facts as sentences (recap material)."""
    rows = yield fetch_all(
        """SELECT s.name AS source_name, r.rel_type, t.name AS target_name
           FROM relationships r
           JOIN entities s ON s.campaign_id = r.campaign_id AND s.id = r.source_id
           JOIN entities t ON t.campaign_id = r.campaign_id AND t.id = r.target_id
           WHERE r.session_id = %s AND r.invalidated_at IS NULL AND r.status = 'canon'
             AND r.visibility = 'public' AND r.rel_type <> 'appears_in'
           ORDER BY r.confidence DESC, r.id LIMIT %s""",
        (session_id, limit),
    )
    return [
        f"{r['source_name']} {r['rel_type'].replace('_', ' ')} {r['target_name']}" for r in rows
    ]


def clear_episode_op(campaign_id: str, episode_id: str) -> Op:
    """Remove the episode's participation links (the summary asset rebuilds them)."""
    n = yield execute(
        f"""DELETE FROM relationships WHERE campaign_id = %s AND target_id = %s
               AND {pipeline_fact()}""",
        (campaign_id, episode_id),
    )
    return n
