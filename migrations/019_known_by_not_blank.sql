-- A secret fact's `known_by` lists the NPCs told of it. The empty string is what a read passes
-- when no NPC is bound (memory/visibility.py, PUBLIC_VIEWER), so an empty entry made the secret
-- public; a blank or NULL entry names nobody either. Every write path (HTTP, Discord, campaign
-- files, the pipeline, store operations) now meets this constraint; rows written before it
-- lose their blank entries, which told no NPC anything.

CREATE FUNCTION glyphoxa_ids_named(ids text[]) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT NOT EXISTS (SELECT 1 FROM unnest(ids) AS x WHERE x IS NULL OR x !~ '\S') $$;

UPDATE relationships
    SET known_by = ARRAY(SELECT x FROM unnest(known_by) AS x WHERE x ~ '\S')
    WHERE NOT glyphoxa_ids_named(known_by);

-- What a campaign file said (migration 018) is cleaned alike, or the reload merge would take
-- the cleaned list for a DM edit and stop following the file.
UPDATE relationships
    SET file_values = jsonb_set(file_values, '{known_by}', coalesce(
        (SELECT jsonb_agg(x) FROM jsonb_array_elements_text(file_values -> 'known_by') AS x
         WHERE x ~ '\S'), '[]'::jsonb))
    WHERE jsonb_typeof(file_values -> 'known_by') = 'array'
      AND EXISTS (SELECT 1 FROM jsonb_array_elements(file_values -> 'known_by') AS v
                  WHERE jsonb_typeof(v) <> 'string' OR v #>> '{}' !~ '\S');

ALTER TABLE relationships
    ADD CONSTRAINT relationships_known_by_named CHECK (glyphoxa_ids_named(known_by));
