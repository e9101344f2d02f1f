"""The dashboard's pages, one module per page family, gathered in one router."""

from fastapi import APIRouter

from realtime.dashboard.routes import campaigns, entities, graph, npcs, review, secrets

router = APIRouter(prefix="/dashboard", include_in_schema=False)
for _module in (campaigns, review, entities, secrets, npcs, graph):
    router.include_router(_module.router)
