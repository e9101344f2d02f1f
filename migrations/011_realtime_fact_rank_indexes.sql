-- Realtime hot context: an NPC's facts, best first, on every voice turn. Hub entities carry
-- hundreds of facts; with the ranking columns in the index each direction reads only the top
-- rows it returns instead of sorting all of them.
CREATE INDEX IF NOT EXISTS relationships_out_ranked
    ON relationships (campaign_id, source_id, confidence DESC, rel_type, id)
    WHERE invalidated_at IS NULL;
CREATE INDEX IF NOT EXISTS relationships_in_ranked
    ON relationships (campaign_id, target_id, confidence DESC, rel_type, id)
    WHERE invalidated_at IS NULL;
