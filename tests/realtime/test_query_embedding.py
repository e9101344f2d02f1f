"""The live query embedder's fast path agrees with the pipeline's own `encode`."""

from __future__ import annotations

import numpy as np

from realtime.query_embedding import QueryEmbedder

TEXTS = ["Where did the innkeeper hide the silver key?", "dragon", "Thorin owes the guild money"]


def test_fast_float_path_matches_encode(rt_embedder) -> None:  # type: ignore[no-untyped-def]
    q = QueryEmbedder(rt_embedder, quantize=False)
    vecs = [q.embed_sync(t) for t in TEXTS]
    assert q._direct is not None
    ref = rt_embedder.embed(TEXTS)
    for v, r in zip(vecs, ref, strict=True):
        assert v.shape == r.shape and v.dtype == np.float32
        assert float(v @ r) > 0.9999


def test_int8_path_keeps_the_nearest_neighbour(rt_embedder) -> None:  # type: ignore[no-untyped-def]
    q = QueryEmbedder(rt_embedder)
    float_vectors = rt_embedder.embed(TEXTS)
    # ONNX Runtime's per-channel int8 stays close to float (torch's eager int8 gave ~0.95)
    assert min(float(q.embed_sync(t) @ f) for t, f in zip(TEXTS, float_vectors, strict=True)) > 0.97
    docs = rt_embedder.embed(["The innkeeper hid the silver key under the floorboard.",
                              "A red dragon sleeps on the mountain.",
                              "Thorin borrowed gold from the merchants' guild."])
    for i, text in enumerate(TEXTS):
        v = q.embed_sync(text)
        assert abs(float(np.linalg.norm(v)) - 1.0) < 1e-4
        assert int(np.argmax(docs @ v)) == i


def test_other_embedders_use_their_own_embed() -> None:
    class Fixed:
        model_id = "fixed"

        def embed(self, texts: list[str]) -> np.ndarray:
            return np.ones((len(texts), 4), dtype=np.float32) / 2

    q = QueryEmbedder(Fixed())
    assert q.embed_sync("anything").tolist() == [0.5] * 4
    assert q._direct is None


async def test_short_queries_are_embedded_on_the_loop_after_scheduled_tasks(  # type: ignore[no-untyped-def]
    rt_embedder,
) -> None:
    """A short query skips the thread hand-off once the fast path is ready, but only after
    tasks already scheduled (a search's full-text leg) have run to their first wait; a long
    one still goes to a worker thread."""
    import asyncio
    import threading

    q = QueryEmbedder(rt_embedder, inline_max_chars=60)
    q.embed_sync("warm up")  # loads the model and the fast path (a thread's job in service)
    assert q._direct is not None
    direct, seen = q._direct, []
    events: list[str] = []

    def spy(text: str) -> np.ndarray:
        seen.append(threading.get_ident())
        events.append("embed")
        return direct(text)

    q._direct = spy

    async def leg() -> None:
        events.append("leg")
        await asyncio.sleep(0.01)

    task = asyncio.ensure_future(leg())
    short = await q.embed(TEXTS[0])
    await task
    assert events[:2] == ["leg", "embed"] and seen[-1] == threading.get_ident()
    assert float(short @ direct(TEXTS[0])) > 0.9999

    long_text = " ".join(TEXTS * 3)
    assert not q.inline(long_text)
    await q.embed(long_text)
    assert seen[-1] != threading.get_ident()
