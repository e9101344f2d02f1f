-- Entity lookup by exact name or alias (KnowledgeGraph.resolve: every tool call and DM edit
-- that names an entity) through indexes. Before, the alias test (`= ANY(unnest(aliases))`)
-- forced a scan of the campaign's entities: ~2.6 ms at 2,000 entities, most of a
-- memory.query_entities call.

CREATE FUNCTION glyphoxa_lower_aliases(aliases text[]) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT coalesce(array_agg(lower(a)), '{}'::text[]) FROM unnest(aliases) a $$;

CREATE INDEX entities_lower_name ON entities (campaign_id, lower(name));
CREATE INDEX entities_lower_aliases ON entities USING gin (glyphoxa_lower_aliases(aliases));
