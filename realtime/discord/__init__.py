"""The Discord bot: the DM runs the campaign's memory from the table.

Slash commands are thin calls into `realtime.service.MemoryService`, the same operations the
HTTP API uses; the voice connection is kept up by `reconnect.Reconnector`. discord.py is
imported only here and by `glyphoxa discord`, so the HTTP service never loads it.
"""
