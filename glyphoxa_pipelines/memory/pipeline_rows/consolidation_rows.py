"""What nightly consolidation changes across a campaign's sessions: duplicate entities
folded into one, and fact confidence re-scored from how many sessions support each fact.
Only pipeline rows change (`ownership`); DM decisions stand."""

from __future__ import annotations

from collections.abc import Sequence

from glyphoxa_pipelines.db.operations import Op, execute, execute_many
from glyphoxa_pipelines.memory.pipeline_rows.ownership import pipeline_entity, pipeline_fact


def merge_entity_op(campaign_id: str, dup_id: str, keep_id: str) -> Op:
    """Fold an extracted duplicate into `keep`: its facts are re-pointed (a fact `keep`
    already has current is dropped, history rows move too), chunk mentions follow, and its
    names become aliases of `keep` when `keep` is itself extracted (DM entities never change).
    """
    p = {"c": campaign_id, "d": dup_id, "k": keep_id}
    yield execute(
        """DELETE FROM relationships r WHERE r.campaign_id = %(c)s
               AND ((r.source_id = %(d)s AND r.target_id = %(k)s)
                    OR (r.source_id = %(k)s AND r.target_id = %(d)s)
                    OR (r.invalidated_at IS NULL AND NOT r.dm_confirmed AND EXISTS (
                        SELECT 1 FROM relationships x WHERE x.campaign_id = %(c)s
                          AND x.invalidated_at IS NULL AND x.rel_type = r.rel_type
                          AND x.source_id = CASE WHEN r.source_id = %(d)s THEN %(k)s
                                                 ELSE r.source_id END
                          AND x.target_id = CASE WHEN r.target_id = %(d)s THEN %(k)s
                                                 ELSE r.target_id END)))
               AND (r.source_id = %(d)s OR r.target_id = %(d)s)""",
        p,
    )
    moved = yield execute(
        """UPDATE relationships SET
               source_id = CASE WHEN source_id = %(d)s THEN %(k)s ELSE source_id END,
               target_id = CASE WHEN target_id = %(d)s THEN %(k)s ELSE target_id END,
               attributes = attributes || jsonb_build_object('merged_from', %(d)s),
               updated_at = now()
           WHERE campaign_id = %(c)s AND (source_id = %(d)s OR target_id = %(d)s)""",
        p,
    )
    yield execute(
        """UPDATE chunks SET entity_ids = ARRAY(
               SELECT x FROM unnest(array_replace(entity_ids, %(d)s, %(k)s))
                   WITH ORDINALITY AS u(x, n)
               GROUP BY x ORDER BY min(n))
           WHERE campaign_id = %(c)s AND %(d)s = ANY(entity_ids)""",
        p,
    )
    yield execute(
        f"""UPDATE entities k SET aliases = ARRAY(
               SELECT DISTINCT a FROM unnest(k.aliases || d.name || d.aliases) a
               WHERE lower(a) <> lower(k.name) ORDER BY a),
               updated_at = now()
           FROM entities d
           WHERE k.campaign_id = %(c)s AND k.id = %(k)s AND {pipeline_entity('k')}
             AND d.campaign_id = %(c)s AND d.id = %(d)s""",
        p,
    )
    yield execute(
        f"""DELETE FROM entities WHERE campaign_id = %(c)s AND id = %(d)s
               AND {pipeline_entity()}""",
        p,
    )
    return moved


def recompute_fact_confidence_op(campaign_id: str, threshold: float) -> Op:
    """Confidence of current extracted facts from all sessions: the extractor's confidence
    (kept in attributes.base_confidence) raised by 0.1 per further session whose chunks
    mention both ends, capped at 0.99; status follows the campaign's review threshold.
    Idempotent: the base is kept, never compounded. DM decisions are untouched."""
    n = yield execute(
        f"""WITH support AS (
               SELECT r.id,
                      coalesce((r.attributes ->> 'base_confidence')::real, r.confidence) AS base,
                      (SELECT count(DISTINCT c.session_id) FROM chunks c
                       WHERE c.campaign_id = r.campaign_id
                         AND c.entity_ids @> ARRAY[r.source_id, r.target_id]) AS sessions
               FROM relationships r
               WHERE r.campaign_id = %(c)s AND {pipeline_fact('r')}
                 AND r.invalidated_at IS NULL AND r.rel_type <> 'appears_in'),
           scored AS (
               SELECT id, base, sessions,
                      least(0.99, base + 0.1 * greatest(sessions - 1, 0))::real AS conf
               FROM support)
           UPDATE relationships r SET confidence = s.conf,
               status = CASE WHEN s.conf >= %(t)s THEN 'canon' ELSE 'pending' END,
               attributes = r.attributes || jsonb_build_object(
                   'base_confidence', s.base, 'supporting_sessions', s.sessions),
               updated_at = now()
           FROM scored s
           WHERE r.id = s.id AND (r.confidence IS DISTINCT FROM s.conf
               OR r.status IS DISTINCT FROM
                  (CASE WHEN s.conf >= %(t)s THEN 'canon' ELSE 'pending' END)
               OR r.attributes -> 'supporting_sessions' IS DISTINCT FROM to_jsonb(s.sessions))""",
        {"c": campaign_id, "t": threshold},
    )
    return n


def set_fact_confidences_op(updates: Sequence[tuple[int, float, str]]) -> Op:
    """(fact id, confidence, status) for extracted, unconfirmed facts only."""
    if not updates:
        return 0
    n = yield execute_many(
        f"""UPDATE relationships SET confidence = %s, status = %s, updated_at = now()
           WHERE id = %s AND {pipeline_fact()}
             AND (confidence, status) IS DISTINCT FROM (%s, %s)""",
        [(conf, status, fid, conf, status) for fid, conf, status in updates],
    )
    return n
