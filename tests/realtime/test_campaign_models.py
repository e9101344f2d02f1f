"""Session search reads a campaign's vectors under its ACTIVE embedding model, with a query
embedded by that model, and learns of a switch from the database's announcement."""

from __future__ import annotations

import asyncio
import uuid

import numpy as np
import pytest

from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import CampaignStore, SemanticIndex, SessionStore
from realtime.campaign_models import QueryModelUnavailableError
from realtime.query_embedding import QueryEmbedders
from realtime.session_search import SESSION_SEARCH, Filters
from realtime.session_search.legs import embed_query, fetch_scene_turns, vector_leg
from realtime.session_search.search import hybrid
from tests.support.hash_embedder import HashEmbedder

QUESTION = "Who sold the party a map of the old tunnels?"
NO_FILTERS = Filters(session_id=None, speaker=None, after=None, before=None, listener=None)


@pytest.fixture(scope="module")
def switched(rt_db_url: str, rt_embedder) -> str:  # type: ignore[no-untyped-def]
    """A campaign of its own, embedded under MiniLM and under the 16-dimension hash model
    (chunks and turns), still active on MiniLM."""
    from tests.support.realtime_seed import seed_campaign

    cid = "rt-models-" + uuid.uuid4().hex[:8]
    seed_campaign(rt_db_url, rt_embedder, cid)
    hashed = HashEmbedder()
    with Database(rt_db_url, max_size=2).open() as db:
        index = SemanticIndex(db)
        index.register_model(hashed.model_id, hashed.dimension)
        chunks = index.chunks_missing_embeddings(hashed.model_id, campaign_id=cid)
        index.add_embeddings(hashed.model_id, list(zip(
            [c.id for c in chunks], hashed.embed([c.text for c in chunks]), strict=True)))
        for session in SessionStore(db).list_sessions(cid):
            turns = index.entries_missing_embeddings(hashed.model_id, session_id=session.id)
            index.add_entry_embeddings(hashed.model_id, list(zip(
                [t.entry_id for t in turns], hashed.embed([t.embedding_text() for t in turns]),
                strict=True)))
    return cid


async def _until(check, seconds: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
    for _ in range(int(seconds / 0.05)):
        if await check():
            return True
        await asyncio.sleep(0.05)
    return False


async def test_a_switch_moves_the_vector_leg_to_the_new_model(  # type: ignore[no-untyped-def]
    rt_service, rt_db_url: str, switched: str
) -> None:
    svc = rt_service
    models = svc.campaign_models
    hashed = HashEmbedder()
    before = models.embedders
    models.embedders = QueryEmbedders(
        svc.embedder, make=lambda m: HashEmbedder() if m == hashed.model_id else None)
    try:
        assert await _until(lambda: asyncio.sleep(0, models.enabled))  # the listener is up
        first = await embed_query(svc, switched, QUESTION)
        assert first is not None and first.model == svc.embedder.model_id
        assert first.vector.shape == (384,)
        assert (await models.active(switched)).name == svc.embedder.model_id  # now cached

        with Database(rt_db_url, max_size=1).open() as db:
            CampaignStore(db).set_active_embedding_model(switched, hashed.model_id)

        async def moved() -> bool:
            q = await embed_query(svc, switched, QUESTION)
            return q is not None and q.model == hashed.model_id

        assert await _until(moved), "the switch was never announced to the service"
        query = await embed_query(svc, switched, QUESTION)
        assert query is not None
        np.testing.assert_allclose(query.vector, hashed.embed([QUESTION])[0], atol=1e-6)

        leg = await vector_leg(svc, switched, query, 6, NO_FILTERS, SESSION_SEARCH)
        store = await svc.run(SemanticIndex.search.op(
            svc.index, switched, hashed.embed([QUESTION])[0], 6, model=hashed.model_id))
        assert leg and [h.chunk.id for h in leg] == [h.chunk.id for h in store]

        # The turns are compared with the query under the same model: their similarities
        # are the hash model's cosines, never MiniLM's.
        hits, vec, _ = await hybrid(svc, switched, QUESTION, 4, NO_FILTERS)
        assert vec is not None and vec.model == hashed.model_id
        turns = await fetch_scene_turns(svc, hits, vec, None, SESSION_SEARCH)
        rows = [r for window in turns.values() for r in window]
        assert rows and all(r["similarity"] is not None for r in rows)
        for r in rows[:10]:
            own = hashed.embed([f"{r['speaker_name']}: {r['text']}"])[0]
            assert r["similarity"] == pytest.approx(float(own @ vec.vector), abs=1e-5)
    finally:
        models.embedders = before
        with Database(rt_db_url, max_size=1).open() as db:
            CampaignStore(db).set_active_embedding_model(switched, svc.embedder.model_id)


async def test_a_model_without_a_query_encoder_is_named(  # type: ignore[no-untyped-def]
    rt_service, rt_db_url: str, switched: str
) -> None:
    svc = rt_service
    with Database(rt_db_url, max_size=1).open() as db:
        CampaignStore(db).set_active_embedding_model(switched, HashEmbedder.model_id)
    try:
        svc.campaign_models.invalidate(switched)  # not waiting for the announcement here
        with pytest.raises(QueryModelUnavailableError, match="test-hash-16"):
            await embed_query(svc, switched, QUESTION)
    finally:
        with Database(rt_db_url, max_size=1).open() as db:
            CampaignStore(db).set_active_embedding_model(switched, svc.embedder.model_id)
        svc.campaign_models.invalidate(switched)


async def test_no_vectors_under_the_active_model_means_no_vector_leg(  # type: ignore[no-untyped-def]
    rt_service, rt_db_url: str
) -> None:
    """A campaign whose active model never had a vector written (not registered) is searched
    by its words alone, without an `unknown embedding model` error."""
    from glyphoxa_pipelines.memory.models import Campaign

    svc = rt_service
    cid = "rt-unembedded-" + uuid.uuid4().hex[:8]
    with Database(rt_db_url, max_size=1).open() as db:
        CampaignStore(db).upsert(Campaign(cid, "never embedded"))
        with db.connection() as conn:
            conn.execute("UPDATE campaigns SET active_embedding_model = 'never-registered'"
                         " WHERE id = %s", (cid,))
    assert await embed_query(svc, cid, QUESTION) is None
    hits, vec, leg = await hybrid(svc, cid, QUESTION, 4, NO_FILTERS)
    assert vec is None and hits == [] and leg == "ok"


async def test_nothing_is_cached_while_the_listener_is_down(  # type: ignore[no-untyped-def]
    rt_service, rt_seed
) -> None:
    from realtime.campaign_models import CampaignModels

    calls = 0

    class Counting:
        async def run(self, op, *, transaction: bool = True):  # type: ignore[no-untyped-def]
            nonlocal calls
            calls += 1
            return await rt_service.run(op, transaction=transaction)

    models = CampaignModels(Counting(), QueryEmbedders(rt_service.embedder))
    await models.active(rt_seed.campaign_id)
    await models.active(rt_seed.campaign_id)
    assert calls == 2  # never enabled: every search asks
    models.reset(enabled=True)
    await models.active(rt_seed.campaign_id)
    await models.active(rt_seed.campaign_id)
    assert calls == 3
    models.invalidate(rt_seed.campaign_id)
    await models.active(rt_seed.campaign_id)
    assert calls == 4
