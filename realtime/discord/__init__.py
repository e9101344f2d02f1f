"""Room for the Discord bot (not built yet): the DM's slash commands (entities, campaign load,
session start / end, recap, review queue) and the voice-channel connection.

Belongs here: Discord client code and command handlers that call `MemoryService`'s public
methods (or the HTTP API). Does not belong here: memory logic (the service's modules) or the
voice loop itself (`realtime/voice/`). Dependency direction: discord -> service, never back.
"""
