"""The memory tools over MCP (the official SDK): `server` builds the server over the service's
one tool dispatch, for stdio (`glyphoxa mcp`) and streamable HTTP (mounted at /mcp)."""
