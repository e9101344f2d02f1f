-- Announce every committed change to a campaign's knowledge graph (entities, relationships,
-- NPC profiles) on the channel `glyphoxa_graph`, payload '<table>:<campaign_id>'.
-- The realtime service caches each NPC's identity and known facts between voice turns and
-- drops a campaign's entries when its notification arrives, so edits made by any process
-- (the pipeline, the CLI, another service worker) reach the next hot context.
-- PostgreSQL delivers notifications at commit and folds duplicates within a transaction, so
-- a bulk load of thousands of rows sends one message per table and campaign.

CREATE FUNCTION glyphoxa_notify_graph_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM pg_notify('glyphoxa_graph', TG_TABLE_NAME || ':' || OLD.campaign_id);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM pg_notify('glyphoxa_graph', TG_TABLE_NAME || ':' || NEW.campaign_id);
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER entities_notify_graph_change
    AFTER INSERT OR UPDATE OR DELETE ON entities
    FOR EACH ROW EXECUTE FUNCTION glyphoxa_notify_graph_change();

CREATE TRIGGER relationships_notify_graph_change
    AFTER INSERT OR UPDATE OR DELETE ON relationships
    FOR EACH ROW EXECUTE FUNCTION glyphoxa_notify_graph_change();

CREATE TRIGGER npc_profiles_notify_graph_change
    AFTER INSERT OR UPDATE OR DELETE ON npc_profiles
    FOR EACH ROW EXECUTE FUNCTION glyphoxa_notify_graph_change();
