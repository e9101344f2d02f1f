-- memory.search_facts matches a question's words against a fact's relation, its evidence and
-- the names of its two entities. It built that text for every visible fact of the campaign
-- (p95 ~100 ms at 10,000 facts); with these indexes it ranks only the facts that match.
CREATE INDEX relationships_search_text ON relationships
    USING gin (to_tsvector('english', replace(rel_type, '_', ' ') || ' ' || evidence));
CREATE INDEX entities_name_text ON entities USING gin (to_tsvector('english', name));
