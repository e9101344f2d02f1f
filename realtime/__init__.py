"""The realtime memory service on the live voice path: live transcript, hot context,
speculative pre-fetch, memory tools over HTTP and MCP. Never imports Dagster. Layout and
dependency direction: realtime/README.md."""
