-- NPC-scoped recall (issue 17): who witnessed each utterance and who was told of it
-- (glyphoxa_pipelines/memory/visibility.py holds the rule, memory/presence.py the writes).
-- witnesses NULL: no presence recorded (every row before this migration), a public line.
-- Both are read row by row after an index has found the rows (a session's recent lines),
-- so neither needs an index of its own.
ALTER TABLE session_entries
    ADD COLUMN witnesses text[],
    ADD COLUMN told text[] NOT NULL DEFAULT '{}';
ALTER TABLE session_entries ADD CONSTRAINT session_entries_presence_not_blank
    CHECK (array_position(witnesses, '') IS NULL AND array_position(told, '') IS NULL);

-- Who may recall a chunk whole: the NPCs who heard every turn it covers (the session's
-- entries from first to last in spoken order, what the turn fetch reads). NULL: every turn
-- is public; '{}': nobody but the DM (no turns, or no NPC heard them all). Kept on the chunk
-- so search judges a candidate by one array instead of a range of entries (the full-text leg
-- judges every chunk that matches a word).
CREATE FUNCTION glyphoxa_chunk_audience(p_session text, p_first bigint, p_last bigint)
RETURNS text[] LANGUAGE sql STABLE AS $$
    WITH turns AS (
        SELECT w.witnesses, w.told
        FROM session_entries f, session_entries l, session_entries w
        WHERE f.id = p_first AND l.id = p_last AND w.session_id = p_session
          AND (w.spoken_at, w.id) >= (f.spoken_at, f.id)
          AND (w.spoken_at, w.id) <= (l.spoken_at, l.id)),
    private AS (SELECT witnesses || told AS heard FROM turns WHERE witnesses IS NOT NULL)
    SELECT CASE
        WHEN NOT EXISTS (SELECT 1 FROM turns) THEN '{}'::text[]
        WHEN NOT EXISTS (SELECT 1 FROM private) THEN NULL
        ELSE ARRAY(SELECT c.n FROM (SELECT DISTINCT unnest(heard) AS n FROM private) c
                   WHERE NOT EXISTS (SELECT 1 FROM private p WHERE NOT (c.n = ANY(p.heard)))
                   ORDER BY c.n)
    END
$$;

ALTER TABLE chunks ADD COLUMN audience text[];

CREATE FUNCTION glyphoxa_chunk_audience_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.audience := glyphoxa_chunk_audience(NEW.session_id, NEW.first_entry_id, NEW.last_entry_id);
    RETURN NEW;
END $$;
CREATE TRIGGER chunks_audience
    BEFORE INSERT OR UPDATE OF session_id, first_entry_id, last_entry_id ON chunks
    FOR EACH ROW EXECUTE FUNCTION glyphoxa_chunk_audience_trigger();

-- Chunks written before this migration: their turns are all public (no presence existed).
UPDATE chunks SET audience = '{}' WHERE first_entry_id IS NULL;
