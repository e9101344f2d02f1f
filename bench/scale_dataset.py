"""A realistic large campaign for benchmarks: sessions of utterances, chunks with clustered
384-d embeddings (real sentence embeddings cluster by topic; uniform noise would be an
unrealistically hard k-NN case), one embedding per utterance near its chunk's, entities and a
sparse, hub-heavy relationship graph.

Every chunk covers a contiguous, non-overlapping run of its session's entries (3 at full
scale) and is written the way the pipeline's chunker writes one ("<speaker>: <text>" lines,
first/last entry ids, the entries' times), so `memory.search_sessions` fetches and scores the
turns of its candidate windows as it does on a live campaign.

Deterministic (seeded), so two runs measure the same data.
"""

from __future__ import annotations

import contextlib
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
import psycopg

from glyphoxa_pipelines.config import DEFAULT_EMBEDDING_MODEL
from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.db.operations import Op, execute
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

# The document model production writes (GLYPHOXA_EMBEDDING_MODEL overrides it, as the other
# benches): live search embeds its query with the campaign's active model, so the query
# encoder timed at full scale is the one a deployment runs. The vectors themselves are
# generated; only their model id and dimension matter here.
MODEL = os.environ.get("GLYPHOXA_EMBEDDING_MODEL", DEFAULT_EMBEDDING_MODEL)
DIM = 384
T0 = datetime(2025, 1, 6, 19, 0, tzinfo=UTC)

# Game vocabulary mixed into the generated transcripts; the realtime bench draws its utterances
# from it too, so both speak the same words.
GAME_WORDS = (
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
# Quick keeps full scale's 3 entries per chunk, so search_sessions packs multi-turn windows.
QUICK = Scale(sessions=6, entries_per_session=3000, chunks=6000, entities=500, relationships=2500)


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

    words = top_n_list("en", 8000) + GAME_WORDS
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


def _entry_ids(db: Database, session_id: str) -> list[int]:
    """The session's entry ids in spoken order: the order the chunks cover them in."""
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT id FROM session_entries WHERE session_id = %s ORDER BY spoken_at, id",
            (session_id,),
        ).fetchall()
    return [int(r[0]) for r in rows]


def _span(seq: int, chunks: int, entries: int) -> tuple[int, int]:
    """Entry positions [lo, hi) of chunk `seq` of `chunks` over `entries` entries: contiguous,
    non-overlapping runs of near-equal length that cover every entry."""
    return seq * entries // chunks, (seq + 1) * entries // chunks


# Weight of a turn's own direction against its chunk's vector, drawn per turn (see
# turn_embeddings): a spread of weights gives the spread of real turn-to-window cosines.
TURN_SPREAD = (0.4, 1.5)


def turn_embeddings(rng: np.random.Generator, chunk_vectors: np.ndarray) -> np.ndarray:
    """One unit vector per turn, near its chunk's: normalize(chunk + w * own), `own` a fresh
    vector of the same clustered space (so a turn keeps the shape of a real embedding: the
    shared direction, a topic) and w uniform in TURN_SPREAD. Calibrated on all-MiniLM-L6-v2
    over LoCoMo 3-turn windows ("<speaker>: <text>" lines): a turn's cosine to its window
    0.78 (sd 0.10), to another turn of the window 0.54; this gives 0.78 (sd 0.09) and 0.66."""
    own = clustered_embeddings(rng, len(chunk_vectors))
    w = rng.uniform(*TURN_SPREAD, size=(len(chunk_vectors), 1))
    x = chunk_vectors + w * own
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _write_entry_embeddings(
    db: Database,
    campaign_id: str,
    session_ids: list[str],
    entry_ids: list[list[int]],
    chunk_of_entry: list[np.ndarray],
    chunk_vectors: np.ndarray,
    seed: int,
) -> None:
    """Every entry's vector for MODEL through one binary COPY: 9 s for full scale's 150,000,
    generation included. The store's upsert (`SemanticIndex.add_entry_embeddings`, the
    pipeline's path) took 1.2 s for 9,000 rows where COPY took 0.36 s (~20 s at full scale).
    Its own generator, so the chunk data stays as it was."""
    rng = np.random.default_rng(seed)
    with (
        db.connection() as conn,
        conn.cursor() as cur,
        cur.copy(
            "COPY entry_embeddings (entry_id, model, campaign_id, session_id, embedding) "
            "FROM STDIN WITH (FORMAT BINARY)"
        ) as copy,
    ):
        copy.set_types(["int8", "text", "text", "text", "vector"])
        for sid, ids, owner in zip(session_ids, entry_ids, chunk_of_entry, strict=True):
            vectors = turn_embeddings(rng, chunk_vectors[owner])
            for eid, vec in zip(ids, vectors, strict=True):
                copy.write_row((eid, MODEL, campaign_id, sid, vec))


def _drop_campaign_op(campaign_id: str) -> Op[int]:
    n = yield execute("DELETE FROM campaigns WHERE id = %s", (campaign_id,))
    return n


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
    db.run(_drop_campaign_op(campaign_id))
    campaigns.upsert(Campaign(campaign_id, "Benchmark campaign"))
    graph, log, index = KnowledgeGraph(db), SessionStore(db), SemanticIndex(db)
    index.register_model(MODEL, DIM)  # with its partial HNSW index, as the pipeline does

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
    session_entries: list[list[NewEntry]] = []
    entry_ids: list[list[int]] = []  # per session, in spoken order
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
        session_entries.append(entries)
        entry_ids.append(_entry_ids(db, sid))
        if progress:
            progress("entries", s + 1, scale.sessions)

    # L2 chunks + embeddings, through index_chunks: each chunk made of its run of entries
    embeddings = clustered_embeddings(rng, scale.chunks)
    per_session = scale.chunks // scale.sessions
    sessions_of = [min(c // per_session, scale.sessions - 1) for c in range(scale.chunks)]
    n_chunks = np.bincount(sessions_of, minlength=scale.sessions)
    if n_chunks.max() > scale.entries_per_session:
        raise ValueError("a chunk must cover at least one entry: more chunks than entries")
    chunk_ids, chunk_sessions, batch_chunks = [], [], []
    chunk_of_entry: list[np.ndarray] = []  # per session: the chunk index each entry is in
    chunks_s = 0.0
    done = 0
    for c in range(scale.chunks):
        s = sessions_of[c]
        seq = c - s * per_session
        sid = session_ids[s]
        lo, hi = _span(seq, int(n_chunks[s]), scale.entries_per_session)
        if seq == 0:
            chunk_of_entry.append(np.empty(scale.entries_per_session, dtype=np.int64))
        chunk_of_entry[s][lo:hi] = c
        run = session_entries[s][lo:hi]
        text = "\n".join(f"{e.speaker_name}: {e.text}" for e in run)
        ents = [entity_ids[int(i)] for i in rng.integers(0, scale.entities, size=2)]
        chunk = Chunk(
            id=f"{sid}#{seq:05d}",
            campaign_id=campaign_id,
            session_id=sid,
            seq=seq,
            text=text,
            speakers=list(dict.fromkeys(e.speaker_name for e in run)),
            entity_ids=ents,
            first_entry_id=entry_ids[s][lo],
            last_entry_id=entry_ids[s][hi - 1],
            start_at=run[0].spoken_at,
            end_at=run[-1].spoken_at + timedelta(seconds=run[-1].duration_s or 0.0),
            token_count=round(1.3 * len(text.split())),  # ~word pieces per English word
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
    # Per-turn embeddings (entry_embeddings), as the pipeline's chunk_embeddings step leaves
    # them; bulk-copied, and timed apart from the store's ingest paths above.
    t = time.perf_counter()
    _write_entry_embeddings(
        db, campaign_id, session_ids, entry_ids, chunk_of_entry, embeddings, seed=seed + 1
    )
    entry_embeddings_s = time.perf_counter() - t
    # Every chunk has a MODEL vector now; the campaign is searched under it, as the pipeline
    # switches a campaign once its backfill is complete.
    campaigns.set_active_embedding_model(campaign_id, MODEL)
    with db.connection() as conn:
        # Steady state before anything is timed: statistics, and the visibility map a live
        # database gets from autovacuum (index-only scans need it). Left to autovacuum, the
        # freshly loaded tables were not yet vacuumed when the timed reads began, and a
        # worker could start on them at any moment during those reads. Then a checkpoint:
        # the load wrote ~0.5 GB of WAL, and a checkpoint it triggers would otherwise flush
        # those pages while the first timed writes (entry ingest) run.
        conn.execute("VACUUM ANALYZE")
        # (a DSN without the pg_checkpoint role skips it)
        with contextlib.suppress(psycopg.errors.InsufficientPrivilege):
            conn.execute("CHECKPOINT")
    return Dataset(
        campaign_id,
        scale,
        session_ids,
        entity_ids,
        npc_ids,
        chunk_ids,
        embeddings,
        np.array(chunk_sessions),
        timings={
            "graph_s": graph_s,
            "entries_s": entries_s,
            "chunks_s": chunks_s,
            "entry_embeddings_s": entry_embeddings_s,
        },
    )


def load(db: Database, scale: Scale, campaign_id: str) -> Dataset | None:
    """The campaign an earlier `build` left in this database, when it holds `scale`'s chunks:
    a full-scale build takes many minutes, and variants compared side by side must read the
    same rows. None when it is absent or another size (build it then). The vectors are not
    read back (`embeddings` is empty): the benches that reuse a campaign query the store."""
    with db.connection() as conn:
        n = conn.execute("SELECT count(*) FROM chunks WHERE campaign_id = %s",
                         (campaign_id,)).fetchone()
        if n is None or int(n[0]) != scale.chunks:
            return None
        sessions = [r[0] for r in conn.execute(
            "SELECT id FROM sessions WHERE campaign_id = %s AND id ~ '-s[0-9]+$'"
            " ORDER BY started_at, id", (campaign_id,)).fetchall()]
        entities = conn.execute(
            "SELECT id, type FROM entities WHERE campaign_id = %s ORDER BY id",
            (campaign_id,)).fetchall()
        chunks = conn.execute(
            "SELECT c.id, s.k FROM chunks c JOIN unnest(%s::text[]) WITH ORDINALITY s(id, k)"
            " ON s.id = c.session_id WHERE c.campaign_id = %s ORDER BY s.k, c.seq",
            (sessions, campaign_id)).fetchall()
    return Dataset(
        campaign_id,
        scale,
        sessions,
        [e for e, _ in entities],
        [e for e, ty in entities if ty == "npc"],
        [c for c, _ in chunks],
        np.empty((0, DIM), dtype=np.float32),
        np.array([int(k) - 1 for _, k in chunks]),
    )
