"""The DM dashboard: server-rendered pages inside the realtime service (Jinja templates, htmx
for in-place edits, cytoscape for the graph; the JS vendored under `static/vendor`, see its
VENDORED.md), at `/dashboard`.

Every page reads and writes through what the JSON API uses (`MemoryService`, the API's DM and
session route functions, the stores' operations, the one visibility rule), so the dashboard
adds pages, not rules. Dependency direction: dashboard -> api routes -> service, never back.
`gate` holds the login and CSRF checks; `routes/` one module per page family.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from realtime.dashboard.gate import DashboardGate
from realtime.dashboard.reprocess import Reprocessor
from realtime.dashboard.routes import router
from realtime.dashboard.templates import STATIC_DIR

__all__ = ["DashboardGate", "Reprocessor", "install_dashboard"]


def install_dashboard(app: FastAPI, reprocessor: Reprocessor | None = None) -> None:
    """Mount the pages and their static files. The gate (login, CSRF) is a middleware the
    app factory places between the Host check and the bearer check."""
    app.state.reprocessor = reprocessor or Reprocessor()
    app.include_router(router)
    app.mount("/dashboard/static", StaticFiles(directory=STATIC_DIR), name="dashboard-static")
