"""One router per resource, gathered by `realtime.api.app`; each reads the service through
`realtime.api.deps.service`."""
