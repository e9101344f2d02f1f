-- Realtime hot context: "facts this NPC knows" looks up `known_by` on every voice turn. A GIN
-- index over current facts keeps that an index scan instead of a scan of the campaign's facts.
CREATE INDEX IF NOT EXISTS relationships_known_by
    ON relationships USING gin (known_by) WHERE invalidated_at IS NULL;
