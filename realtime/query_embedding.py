"""Query embeddings on the live path: one short text at a time, under a latency budget.

`QueryEmbedder` caches (the same topic is often asked twice in a turn: pre-fetch, then the
tool) and, for the bundled sentence-transformers model, skips `SentenceTransformer.encode`'s
batching machinery: one unpadded forward pass, mean pooling, L2 norm. It runs the provider's
ONNX Runtime graph on one non-spinning thread where the provider has one, else torch directly.
With the default model, documents keep the pipeline's full-precision embeddings and only the
query side may run the int8 graph (see `QUANTIZE`); with the int8 model id
(`embeddings.INT8_MODEL_ID`) documents and queries both come from that graph.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import sys
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from glyphoxa_pipelines.providers.embeddings import (
    DEFAULT_MODEL_ID,
    INT8_LATE_MODEL_ID,
    INT8_MODEL_ID,
    LATE_MODEL_ID,
)

log = logging.getLogger(__name__)

# Dynamic int8 for the query encoder: through ONNX Runtime (per-channel weights) about half the
# float graph's time, its vectors within cosine ~0.99 of the float ones (torch's eager int8:
# ~0.95), and a nearest-neighbour ranking barely moves (figures: DESIGN.md, "Session search"
# and "Embedding throughput"). Set False to embed queries exactly as the pipeline embeds
# documents.
QUANTIZE = True
# Queries up to this many characters (~50 word pieces; a spoken question is shorter) are
# embedded on the calling thread, the event loop's, once the fast path is ready: the int8 pass
# takes a few ms, and handing it to a worker thread cost more than that on a loaded machine
# (the worker and then the loop each wait to be scheduled; figures: docs/DESIGN.md). Longer
# texts, the first call (it loads the model) and the model's own `encode` still go to a
# thread. 0 sends every query to a thread.
INLINE_MAX_CHARS = 200
# The fast path must agree with the model's own `encode` on a probe sentence at least this
# well (cosine; int8 / float), else it is switched off (a model with other pooling, say).
_MIN_AGREEMENT = (0.85, 0.999)


class _DirectEncoder:
    """One text -> one unit vector through a BERT-style sentence-transformers model with mean
    pooling, without `encode`'s per-call batching, sorting and conversions."""

    def __init__(self, st_model: Any, tokenizer: Any, quantize: bool) -> None:
        import torch
        from tokenizers import Tokenizer

        self._torch = torch
        transformer = st_model[0]
        self._model = transformer.auto_model
        if quantize:
            with warnings.catch_warnings():  # torch marks its eager quantization deprecated
                warnings.simplefilter("ignore")
                self._model = torch.ao.quantization.quantize_dynamic(
                    copy.deepcopy(self._model), {torch.nn.Linear}, dtype=torch.qint8
                )
        # A private copy: the shared tokenizer counts chunk tokens and must stay untruncated.
        self._tok = Tokenizer.from_str(tokenizer.to_str())
        self._tok.no_padding()
        self._tok.enable_truncation(int(getattr(transformer, "max_seq_length", 256) or 256))

    def __call__(self, text: str) -> np.ndarray:
        torch = self._torch
        enc = self._tok.encode(text)
        with torch.inference_mode():
            out = self._model(
                input_ids=torch.tensor([enc.ids]),
                attention_mask=torch.tensor([enc.attention_mask]),
                token_type_ids=torch.tensor([enc.type_ids]),
            ).last_hidden_state[0]
            vec = out.mean(0).numpy().astype(np.float32)
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm else vec


def _is_mean_pooled_bert(st_model: Any) -> bool:
    try:
        pooling = st_model[1]
        mode = getattr(pooling, "pooling_mode_mean_tokens", None)
        if mode is None:  # newer sentence-transformers: a config dict / attribute
            mode = getattr(pooling, "pooling_mode", None) == "mean"
        return bool(mode) and hasattr(st_model[0], "auto_model")
    except (IndexError, TypeError, AttributeError):
        return False


class QueryEmbedder:
    """Query embeddings with a small LRU. The model is loaded once per process by the
    provider; `fast` (default) uses `_DirectEncoder` where the model allows it."""

    def __init__(
        self,
        embedder: Any | None = None,
        cache: int = 512,
        threads: int | None = 1,
        *,
        fast: bool = True,
        quantize: bool = QUANTIZE,
        inline_max_chars: int = INLINE_MAX_CHARS,
    ) -> None:
        self._embedder = embedder
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._size = cache
        self._threads = threads
        self._configured = False
        self._fast = fast
        self._quantize = quantize
        self._direct: Callable[[str], np.ndarray] | None = None
        self._inline_max_chars = inline_max_chars

    def _configure(self) -> None:
        """One intra-op thread for single queries: with torch's default (all cores) a busy
        machine makes its threads spin against the event loop and PostgreSQL (figures:
        DESIGN.md, "Session search")."""
        self._configured = True
        if self._threads and "torch" in sys.modules:
            import torch

            torch.set_num_threads(self._threads)
        if self._fast:
            self._direct = self._make_direct()

    def _make_direct(self) -> Callable[[str], np.ndarray] | None:
        emb = self._embedder
        try:
            direct = self._onnx_direct(emb) or self._torch_direct(emb)
            if direct is None:
                return None
            probe = "Where did the innkeeper hide the silver key last session?"
            agreement = float(direct(probe) @ np.asarray(emb.embed([probe])[0]))
        except Exception:  # noqa: BLE001 - the plain path always works
            log.exception("fast query embedding unavailable; using the model's encode")
            return None
        if agreement < _MIN_AGREEMENT[0 if self._quantize else 1]:
            log.warning("fast query embedding disagrees with encode (%.3f); not used", agreement)
            return None
        return direct

    def _onnx_direct(self, emb: Any) -> Callable[[str], np.ndarray] | None:
        make = getattr(emb, "onnx_encoder", None)
        encoder = make(quantized=self._quantize, threads=self._threads or 1) if make else None
        return encoder.encode_one if encoder is not None else None

    def _torch_direct(self, emb: Any) -> _DirectEncoder | None:
        st_model = getattr(emb, "model", None) if hasattr(emb, "_tokenizer") else None
        if st_model is None or not _is_mean_pooled_bert(st_model):
            return None
        return _DirectEncoder(st_model, emb._tokenizer(), self._quantize)

    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            from glyphoxa_pipelines.providers.embeddings import SentenceTransformerEmbedder

            self._embedder = SentenceTransformerEmbedder()
        return self._embedder

    @property
    def model_id(self) -> str:
        return str(self.embedder.model_id)

    def embed_sync(self, text: str) -> Any:
        hit = self._cache.get(text)
        if hit is not None:
            self._cache.move_to_end(text)
            return hit
        embedder = self.embedder
        if not self._configured:
            embedder.embed(["warm up"])  # loads the model (and torch)
            self._configure()
        vec = self._direct(text) if self._direct is not None else embedder.embed([text])[0]
        self._cache[text] = vec
        while len(self._cache) > self._size:
            self._cache.popitem(last=False)
        return vec

    def inline(self, text: str) -> bool:
        """Whether `embed` computes `text` on the calling thread (see `INLINE_MAX_CHARS`)."""
        return self._direct is not None and len(text) <= self._inline_max_chars

    async def embed(self, text: str) -> Any:
        hit = self._cache.get(text)
        if hit is not None:
            return hit
        if self.inline(text):
            # Tasks already scheduled (a search's full-text leg) send their statements first,
            # so the database works while this thread computes.
            await asyncio.sleep(0)
            return self.embed_sync(text)
        return await asyncio.to_thread(self.embed_sync, text)


# Document models whose query encoder this process can build by itself: the bundled model, in
# float and int8, each also with turns read off their chunk's pass (late chunking changes only
# turn documents; a query is embedded alone either way). `providers.embeddings.get_embedder`
# knows all four by id. Another model's
# queries need its embedder handed in (the service's configured one), else a campaign whose
# vectors are under it cannot be searched by meaning (`campaign_models.py` says so).
LOCAL_QUERY_MODELS = frozenset({DEFAULT_MODEL_ID, INT8_MODEL_ID, LATE_MODEL_ID, INT8_LATE_MODEL_ID})


def local_embedder(model_id: str) -> Any | None:
    """The bundled embedder under `model_id`, or None for a model this process cannot make."""
    if model_id not in LOCAL_QUERY_MODELS:
        return None
    from glyphoxa_pipelines.providers.embeddings import get_embedder

    return get_embedder("local", model=model_id)


class QueryEmbedders:
    """One `QueryEmbedder` per document model: a query is compared only with vectors of the
    model that embedded it. The service's configured embedder answers for its own model;
    others are built on first use by `make` (None: that model's queries cannot be embedded
    here), with the same cache size and threads."""

    def __init__(
        self,
        default: QueryEmbedder,
        make: Callable[[str], Any | None] = local_embedder,
        **options: Any,
    ) -> None:
        self.default = default
        self._make = make
        self._options = options
        self._built: dict[str, QueryEmbedder | None] = {}

    def get(self, model_id: str) -> QueryEmbedder | None:
        """The query embedder whose vectors sit beside `model_id`'s documents, or None."""
        if model_id == self.default.model_id:
            return self.default
        if model_id not in self._built:
            embedder = self._make(model_id)
            if embedder is not None and str(embedder.model_id) != model_id:
                raise ValueError(f"query embedder for {model_id!r} reports "
                                 f"{embedder.model_id!r}")
            self._built[model_id] = (QueryEmbedder(embedder, **self._options)
                                     if embedder is not None else None)
        return self._built[model_id]
