"""The HTTP API: `app` (the app factory, error handlers, MCP mount), `deps` (what routes share)
and `routes/` (one router per resource). Routes stay thin: each calls one public method of
`MemoryService`."""
