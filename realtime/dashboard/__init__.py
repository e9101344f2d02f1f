"""Room for the DM dashboard (not built yet): a web view of the campaign's entities, facts,
review queue, live sessions and the service's health.

Belongs here: the dashboard's routes, templates and view models, reading through
`MemoryService` (DM edits, health) the way `realtime/api/` does. Dependency direction:
dashboard -> service, never back.
"""
