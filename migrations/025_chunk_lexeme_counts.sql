-- How many of a campaign's chunks hold each lexeme: the full-text leg of session search
-- (realtime/session_search/fulltext.py) ranks only a question's rarer words and reads each
-- word's chunk count first. Counted from the chunks themselves, a word most chunks hold cost a
-- bitmap scan and hundreds of heap rows (most of the leg for a question of common words); here
-- it is one primary-key probe. Kept exact by the triggers below, so the words picked depend on
-- the stored chunks alone, as before.
CREATE TABLE chunk_lexeme_counts (
    campaign_id  text NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    lexeme       text NOT NULL,
    chunks       integer NOT NULL CHECK (chunks >= 0),
    PRIMARY KEY (campaign_id, lexeme)
);

-- One statement's chunk changes as lexeme deltas: +1 for each lexeme of each new row, -1 for
-- each of each old row. An update that leaves a row's text as it was (presence edits rewrite
-- `audience` on a whole session's chunks) is skipped before its lexemes are read.
-- Concurrent writers of one campaign take turns (a transaction-level advisory lock per
-- campaign, taken in campaign order): two transactions that each write several chunks would
-- otherwise lock shared lexemes' rows in crossing orders and deadlock.
CREATE FUNCTION glyphoxa_chunk_lexeme_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    cs text[];
    ls text[];
    ns integer[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(c ORDER BY c, l), array_agg(l ORDER BY c, l), array_agg(n ORDER BY c, l)
        INTO cs, ls, ns
        FROM (SELECT r.campaign_id AS c, x.lexeme AS l, count(*)::integer AS n
              FROM new_rows r, unnest(r.tsv) x GROUP BY 1, 2) d;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(c ORDER BY c, l), array_agg(l ORDER BY c, l), array_agg(n ORDER BY c, l)
        INTO cs, ls, ns
        FROM (SELECT r.campaign_id AS c, x.lexeme AS l, -count(*)::integer AS n
              FROM old_rows r, unnest(r.tsv) x GROUP BY 1, 2) d;
    ELSE
        SELECT array_agg(c ORDER BY c, l), array_agg(l ORDER BY c, l), array_agg(n ORDER BY c, l)
        INTO cs, ls, ns
        FROM (SELECT c, l, sum(s)::integer AS n FROM (
                  SELECT r.campaign_id AS c, x.lexeme AS l, 1 AS s
                  FROM new_rows r, unnest(r.tsv) x
                  WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.id = r.id
                                    AND o.campaign_id = r.campaign_id AND o.tsv = r.tsv)
                  UNION ALL
                  SELECT r.campaign_id, x.lexeme, -1
                  FROM old_rows r, unnest(r.tsv) x
                  WHERE NOT EXISTS (SELECT 1 FROM new_rows o WHERE o.id = r.id
                                    AND o.campaign_id = r.campaign_id AND o.tsv = r.tsv)) y
              GROUP BY 1, 2 HAVING sum(s) <> 0) d;
    END IF;
    IF cs IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended('chunk_lexeme_counts/' || c, 0))
    FROM (SELECT DISTINCT c FROM unnest(cs) c ORDER BY 1) x;
    -- Decrements only update (a campaign being deleted may have lost its rows already).
    UPDATE chunk_lexeme_counts t SET chunks = greatest(t.chunks + d.n, 0)
    FROM unnest(cs, ls, ns) d(c, l, n)
    WHERE d.n < 0 AND t.campaign_id = d.c AND t.lexeme = d.l;
    INSERT INTO chunk_lexeme_counts AS t (campaign_id, lexeme, chunks)
    SELECT d.c, d.l, d.n FROM unnest(cs, ls, ns) d(c, l, n) WHERE d.n > 0 ORDER BY 1, 2
    ON CONFLICT (campaign_id, lexeme) DO UPDATE SET chunks = t.chunks + excluded.chunks;
    RETURN NULL;
END $$;

CREATE TRIGGER chunks_lexeme_counts_insert AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_chunk_lexeme_counts();
CREATE TRIGGER chunks_lexeme_counts_update AFTER UPDATE ON chunks
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_chunk_lexeme_counts();
CREATE TRIGGER chunks_lexeme_counts_delete AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION glyphoxa_chunk_lexeme_counts();

-- Chunks written before this migration.
INSERT INTO chunk_lexeme_counts (campaign_id, lexeme, chunks)
SELECT c.campaign_id, l.lexeme, count(*) FROM chunks c, unnest(c.tsv) l
GROUP BY 1, 2;
