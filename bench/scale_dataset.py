"""A realistic large campaign for benchmarks: sessions of utterances, chunks with clustered
384-d embeddings (real sentence embeddings cluster by topic; uniform noise would be an
unrealistically hard k-NN case), entities and a sparse, hub-heavy relationship graph.

Deterministic (seeded), so two runs measure the same data.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np

from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.db.operations import execute_many, operation
from glyphoxa_pipelines.memory import (
    Campaign,
    CampaignStore,
    Chunk,
    KnowledgeGraph,
    NewEntry,
    NpcProfile,
    SemanticIndex,
    SessionStore,
)

MODEL = "all-MiniLM-L6-v2"
DIM = 384
T0 = datetime(2025, 1, 6, 19, 0, tzinfo=UTC)

_WORDS = (
    "dragon tavern sword wizard tower crown king queen shard poison forge hammer mine guard "
    "captain ledger feast manor gate barracks river bridge forest cave goblin orc elf dwarf "
    "spell scroll potion gold coin map riddle vault secret door key ship storm temple priest "
    "cult shadow moon fire ice ring amulet letter debt promise betrayal ambush treaty"
).split()
_TYPES = ("npc", "location", "item", "faction", "quest", "event", "player", "creature")
_RELS = (
    "knows",
    "lives_in",
    "owns",
    "member_of",
    "located_in",
    "allied_with",
    "enemy_of",
    "serves",
    "seeks",
    "guards",
)


@dataclass(frozen=True)
class Scale:
    sessions: int
    entries_per_session: int
    chunks: int
    entities: int
    relationships: int

    @property
    def entries(self) -> int:
        return self.sessions * self.entries_per_session


FULL = Scale(
    sessions=50, entries_per_session=3000, chunks=50_000, entities=2000, relationships=10_000
)
QUICK = Scale(sessions=6, entries_per_session=1000, chunks=6000, entities=500, relationships=2500)


@dataclass
class Dataset:
    campaign_id: str
    scale: Scale
    session_ids: list[str]
    entity_ids: list[str]
    npc_ids: list[str]
    chunk_ids: list[str]
    embeddings: np.ndarray
    chunk_sessions: np.ndarray
    timings: dict[str, float] = field(default_factory=dict)


def _vocabulary() -> tuple[list[str], np.ndarray]:
    """English words with their real frequencies (Zipfian), plus game words: full-text
    queries then match as many rows as they would in real transcripts, not a quarter of
    them as a 56-word vocabulary would."""
    from wordfreq import top_n_list, word_frequency

    words = top_n_list("en", 8000) + _WORDS
    freqs = np.array([word_frequency(w, "en") for w in words])
    return np.array(words), np.cumsum(freqs / freqs.sum())


_VOCAB: tuple[np.ndarray, np.ndarray] | None = None


def _sentence(rng: np.random.Generator, names: list[str], n_words: int) -> str:
    global _VOCAB
    if _VOCAB is None:
        _VOCAB = _vocabulary()
    vocab, cdf = _VOCAB
    picks = np.minimum(np.searchsorted(cdf, rng.random(n_words)), len(vocab) - 1)
    words = [str(w) for w in vocab[picks]]
    if names and rng.random() < 0.4:
        words.insert(int(rng.integers(0, len(words))), str(rng.choice(names)))
    return " ".join(words).capitalize() + "."


def clustered_embeddings(
    rng: np.random.Generator, n: int, topics: int = 150, *, seed: int = 1234
) -> np.ndarray:
    """Unit vectors shaped like real sentence embeddings, not like uniform noise.

    Calibrated on all-MiniLM-L6-v2 embeddings of 1,000 real CRD3 chunks (7 turns, 1 turn of
    overlap): mean nearest-neighbour cosine 0.58, mean pairwise cosine 0.16 (sd 0.11; real
    embeddings share a common direction), participation ratio 82 (a low intrinsic dimension).
    This generator gives 0.54, 0.16 (sd 0.10) and 66 at the same size: topics in a 128-d
    latent space with a decaying spectrum, a shared direction, and isotropic noise. The
    latent basis comes from `seed`, so queries and data share one embedding space.
    """
    space = np.random.default_rng(seed)
    latent, decay = 128, 0.98
    basis = space.normal(size=(latent, DIM))
    basis /= np.linalg.norm(basis, axis=1, keepdims=True)
    scales = decay ** np.arange(latent)
    common = space.normal(size=DIM)
    common /= np.linalg.norm(common)
    centers = space.normal(size=(topics, latent)) * scales
    z = centers[rng.integers(0, topics, size=n)] + rng.normal(size=(n, latent)) * scales
    x = z @ basis
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x = x + 0.5 * common + 0.6 * rng.normal(size=(n, DIM)) / np.sqrt(DIM)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


@operation
def _drop_campaign(store: CampaignStore, campaign_id: str):  # type: ignore[no-untyped-def]
    yield execute_many("DELETE FROM campaigns WHERE id = %s", [(campaign_id,)])


def build(
    db: Database,
    scale: Scale,
    campaign_id: str = "bench-store",
    seed: int = 42,
    progress=None,
    writers: int = 2,
) -> Dataset:  # type: ignore[no-untyped-def]
    """Create the campaign from scratch; time the bulk ingest paths."""
    rng = np.random.default_rng(seed)
    campaigns = CampaignStore(db)
    _drop_campaign(campaigns, campaign_id)
    campaigns.upsert(Campaign(campaign_id, "Benchmark campaign"))
    graph, log, index = KnowledgeGraph(db), SessionStore(db), SemanticIndex(db)

    # L3 entities + relationships (hubs: a few entities get many edges, like real campaigns)
    entity_ids = [f"e{i:05d}" for i in range(scale.entities)]
    names = [f"Name{i:05d}" for i in range(scale.entities)]
    types = [_TYPES[i % len(_TYPES)] for i in range(scale.entities)]
    t = time.perf_counter()
    with db.connection() as conn, conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO entities (campaign_id, id, type, name, provenance) "
            "VALUES (%s, %s, %s, %s, 'import')",
            [(campaign_id, e, ty, n) for e, ty, n in zip(entity_ids, types, names, strict=True)],
        )
        weights = 1.0 / np.arange(1, scale.entities + 1) ** 0.8
        weights /= weights.sum()
        seen: set[tuple[int, int, str]] = set()
        rels = []
        while len(rels) < scale.relationships:
            s = int(rng.choice(scale.entities, p=weights))
            o = int(rng.integers(0, scale.entities))
            r = _RELS[int(rng.integers(0, len(_RELS)))]
            if s == o or (s, o, r) in seen:
                continue
            seen.add((s, o, r))
            vis = "secret" if rng.random() < 0.05 else "public"
            rels.append(
                (campaign_id, entity_ids[s], entity_ids[o], r, float(rng.uniform(0.5, 1)), vis)
            )
        cur.executemany(
            "INSERT INTO relationships (campaign_id, source_id, target_id, rel_type, confidence,"
            " visibility, provenance) VALUES (%s, %s, %s, %s, %s, %s, 'import')",
            rels,
        )
    graph_s = time.perf_counter() - t
    npc_ids = [e for e, ty in zip(entity_ids, types, strict=True) if ty == "npc"]
    for npc in npc_ids[:50]:
        graph.upsert_npc_profile(
            NpcProfile(campaign_id, npc, personality="gruff", behavior_rules=["never lie"])
        )

    # L1 entries, through the store's bulk path
    session_ids = []
    entries_s = 0.0
    for s in range(scale.sessions):
        start = T0 + timedelta(days=7 * s)
        sid = log.start_session(campaign_id, f"{campaign_id}-s{s:03d}", started_at=start).id
        session_ids.append(sid)
        entries = [
            NewEntry(
                idempotency_key=f"{i}",
                text=_sentence(rng, names[:300], int(rng.integers(6, 22))),
                speaker_id=f"p{i % 5}",
                speaker_name=f"Player{i % 5}",
                speaker_role="dm" if i % 5 == 0 else "player",
                spoken_at=start + timedelta(seconds=4.5 * i),
                duration_s=4.0,
            )
            for i in range(scale.entries_per_session)
        ]
        t = time.perf_counter()  # time the store, not the text generation
        for b in range(0, len(entries), 1000):
            log.write_entries(sid, entries[b : b + 1000])
        entries_s += time.perf_counter() - t
        if progress:
            progress("entries", s + 1, scale.sessions)

    # L2 chunks + embeddings, through index_chunks
    embeddings = clustered_embeddings(rng, scale.chunks)
    per_session = scale.chunks // scale.sessions
    chunk_ids, chunk_sessions, batch_chunks = [], [], []
    chunks_s = 0.0
    done = 0
    for c in range(scale.chunks):
        s = min(c // per_session, scale.sessions - 1)
        seq = c - s * per_session
        sid = session_ids[s]
        start = T0 + timedelta(days=7 * s, seconds=60 * seq)
        ents = [entity_ids[int(i)] for i in rng.integers(0, scale.entities, size=2)]
        chunk = Chunk(
            id=f"{sid}#{seq:05d}",
            campaign_id=campaign_id,
            session_id=sid,
            seq=seq,
            text=" ".join(_sentence(rng, names[:300], 12) for _ in range(6)),
            speakers=["Player1", "Player2"],
            entity_ids=ents,
            start_at=start,
            end_at=start + timedelta(seconds=60),
            token_count=100,
            chunker_version="bench",
        )
        chunk_ids.append(chunk.id)
        chunk_sessions.append(s)
        batch_chunks.append(chunk)
        if len(batch_chunks) == 1000 or c == scale.chunks - 1:
            # Chunk rows and their embeddings through index_chunks from `writers` connections
            # at once: HNSW insertion is CPU-bound per backend, so parallel writers use both
            # cores (the store is safe for concurrent use). Only the store calls are timed.
            vectors = embeddings[done : done + len(batch_chunks)]
            parts = [(batch_chunks[w::writers], vectors[w::writers]) for w in range(writers)]
            t = time.perf_counter()
            with ThreadPoolExecutor(writers) as pool:
                list(pool.map(lambda p: index.index_chunks(p[0], p[1], model=MODEL), parts))
            chunks_s += time.perf_counter() - t
            done += len(batch_chunks)
            batch_chunks = []
            if progress:
                progress("chunks", done, scale.chunks)
    with db.connection() as conn:
        # Steady state before anything is timed: statistics, and the visibility map a live
        # database gets from autovacuum (index-only scans need it). Left to autovacuum, the
        # freshly loaded tables were not yet vacuumed when the timed reads began, and a
        # worker could start on them at any moment during those reads.
        conn.execute("VACUUM ANALYZE")
    return Dataset(
        campaign_id,
        scale,
        session_ids,
        entity_ids,
        npc_ids,
        chunk_ids,
        embeddings,
        np.array(chunk_sessions),
        timings={"graph_s": graph_s, "entries_s": entries_s, "chunks_s": chunks_s},
    )
