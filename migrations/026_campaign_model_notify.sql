-- Announce a switch of a campaign's active embedding model on `glyphoxa_graph`, payload
-- 'campaigns:<campaign_id>' (the channel and form of migration 014). The realtime service
-- caches which model each campaign is searched under (`realtime/campaign_models.py`) and
-- drops the campaign's entry when this arrives, so the first search after a switch embeds
-- its query with the new model and reads only the new model's vectors.

CREATE FUNCTION glyphoxa_notify_active_model() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('glyphoxa_graph', 'campaigns:' || NEW.id);
    RETURN NULL;
END;
$$;

CREATE TRIGGER campaigns_notify_active_model
    AFTER UPDATE OF active_embedding_model ON campaigns
    FOR EACH ROW
    WHEN (OLD.active_embedding_model IS DISTINCT FROM NEW.active_embedding_model)
    EXECUTE FUNCTION glyphoxa_notify_active_model();
