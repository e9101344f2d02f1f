"""A mean-pooled BERT sentence encoder (the bundled all-MiniLM-L6-v2) run by ONNX Runtime.

Why: torch's eager CPU path spends most of a small encoder's time outside the matrix products
(dispatch, per-op allocation); ONNX Runtime runs the same float32 graph with fused kernels, so
the pipeline's vectors stay the model's own (they agree with `SentenceTransformer.encode` to
float rounding, checked at export) while a batch and, above all, a single live query get
cheaper. The query side may use a dynamically int8-quantized copy (per-channel weights), which
stays much closer to the float vectors than torch's eager int8 did (figures: DESIGN.md).

The int8 graph is built for speed on CPUs without VNNI: the model is re-exported with eager
attention (the SDPA export hides the attention pattern), ONNX Runtime's transformer optimizer
fuses it into Attention / SkipLayerNormalization / BiasGelu nodes, and only then are the
weights quantized, so attention runs as one QAttention kernel instead of a dozen float ops.
Its vectors are not the float model's (cosine ~0.99), so documents embedded with it carry
their own model id (`embeddings.INT8_MODEL_ID`) and never mix with float rows.

The graph is exported once per machine from the packaged weights (`torch.onnx`, nothing is
downloaded) into a cache folder and reused by every later process, which then loads without
torch.

Float documents run in batches of texts of the SAME word-piece length: no padding, so a text's
vector is the one it gets alone (a padded batch differs in rounding only, but a vector must not
depend on its neighbours), and the batches go to single-threaded passes, one per core, side by
side. Two intra-op threads on one batch synchronise at every operator; on a shared machine a
descheduled thread stalls both, and idle threads spin. Independent passes do neither.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

# Bump when the export (graph, opset, quantization settings) changes: the cache key holds it.
EXPORT_VERSION = "1"
INT8_VERSION = "fused1"  # the int8 graph's own recipe (eager export, fusion, quantization)
OPSET = 17
# Largest float32 difference from torch tolerated for the exported graph (the pipeline's
# vectors must stay the model's own; an export that drifts further is refused, not used).
MAX_EXPORT_DRIFT = 1e-4
# Least cosine between the int8 graph's and the float graph's vector of a probe: a quantized
# graph further off is broken (saturated kernels, a failed fusion), not merely rounded.
MIN_INT8_COSINE = 0.97
BERT_HEADS_HIDDEN = (12, 384)  # all-MiniLM-L6-v2's attention heads and width, for the fuser
BATCH_TOKENS = 8192  # word pieces per forward pass: the best of 4k / 8k / 16k measured
MAX_BATCH = 256
# How texts share a forward pass. "equal_length": batches of one word-piece length, a
# single-threaded pass per core (float documents). "alone": one text per pass, a pass per core
# (the int8 graph: its activations are quantized per tensor, so even an unpadded neighbour
# moves a vector). "padded": length-sorted batches padded to their longest text, one pass at a
# time on every core (the encoder before equal-length batches; kept to measure against).
PACKINGS = ("equal_length", "alone", "padded")
CACHE_ENV = "GLYPHOXA_MODEL_CACHE"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_PROBES = [
    "Where did the innkeeper hide the silver key last session?",
    "Matt: You enter the tavern. A half-orc behind the bar looks up and grunts.",
    "dragon",
]


class ExportError(RuntimeError):
    """The model could not be exported to ONNX, or its export disagrees with torch."""


def cache_dir() -> Path:
    """Where exported graphs live: $GLYPHOXA_MODEL_CACHE, else the user's cache folder."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "glyphoxa" / "onnx"


def _cache_key(model_path: Path) -> str:
    """The weights (by size and config content), the exporter's torch and our export logic."""
    import torch

    digest = hashlib.sha256()
    for name in ("config.json", "tokenizer.json", "sentence_bert_config.json"):
        f = model_path / name
        if f.exists():
            digest.update(f.read_bytes())
    for weights in sorted(model_path.glob("*.safetensors")) + sorted(model_path.glob("*.bin")):
        digest.update(f"{weights.name}:{weights.stat().st_size}".encode())
    digest.update(f"{torch.__version__}/{OPSET}/{EXPORT_VERSION}".encode())
    return digest.hexdigest()[:16]


def _read_max_seq_length(model_path: Path) -> int:
    import json

    config = model_path / "sentence_bert_config.json"
    if config.exists():
        return int(json.loads(config.read_text()).get("max_seq_length") or 256)
    return 256


def make_tokenizer(model_path: Path, max_seq_length: int) -> Any:
    """The model's word-piece tokenizer, truncating where sentence-transformers does."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_path / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_seq_length)
    return tokenizer


def _last_hidden_state(bert: Any) -> Any:
    """The transformers BERT as three tensors in, one out: what the exporter can trace
    (keyword-only inputs and a ModelOutput it cannot)."""
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.bert(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
            ).last_hidden_state

    return LastHiddenState().eval()


def _export_float(bert: Any, target: Path) -> None:
    import torch

    ids = torch.ones((2, 16), dtype=torch.long)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "last_hidden_state")}
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")  # the TorchScript exporter announces its deprecation
        torch.onnx.export(
            _last_hidden_state(bert),
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(target),
            input_names=list(_INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )


def _quantize(model_path: Path, float_graph: Path, target: Path) -> None:
    """Eager-attention export, operator fusion, then per-channel dynamic int8 weights."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model
    from transformers import AutoModel

    _force_offline()
    bert = AutoModel.from_pretrained(
        str(model_path), attn_implementation="eager", local_files_only=True
    ).eval()
    heads, hidden = _heads_and_hidden(model_path)
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        eager, fused = Path(work) / "eager.onnx", Path(work) / "fused.onnx"
        _export_float(bert, eager)
        optimized = optimize_model(
            str(eager), model_type="bert", num_heads=heads, hidden_size=hidden, opt_level=1
        )
        optimized.save_model_to_file(str(fused))
        quantize_dynamic(
            str(fused),
            str(target),
            weight_type=QuantType.QInt8,
            per_channel=True,  # one scale per output channel of a weight, not one per matrix
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    _check_int8(target, float_graph, model_path)


def _force_offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _heads_and_hidden(model_path: Path) -> tuple[int, int]:
    import json

    config = model_path / "config.json"
    if not config.exists():
        return BERT_HEADS_HIDDEN
    values = json.loads(config.read_text())
    return int(values["num_attention_heads"]), int(values["hidden_size"])


def _check_int8(int8_graph: Path, float_graph: Path, model_path: Path) -> None:
    quantized = OnnxSentenceEncoder(int8_graph, model_path, threads=1, packing="alone").encode(
        _PROBES
    )
    exact = OnnxSentenceEncoder(float_graph, model_path, threads=1).encode(_PROBES)
    worst = float((quantized * exact).sum(axis=1).min())
    if worst < MIN_INT8_COSINE:
        raise ExportError(
            f"the int8 graph of {model_path.name} is off the float one (cosine {worst:.3f}, "
            f"less than {MIN_INT8_COSINE})"
        )


def _replace_atomically(make: Callable[[Path], None], target: Path) -> None:
    """Concurrent processes may export at once: each writes its own file, the last rename
    wins, and no reader ever sees a half-written graph."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".onnx.tmp")
    os.close(fd)
    try:
        make(Path(tmp))
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide the cache from other users
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def exported_graph(
    model_path: str | Path, load_bert: Callable[[], Any], *, quantized: bool = False
) -> Path:
    """The cached ONNX graph of the model at `model_path`, exported first if missing.

    `load_bert` returns the torch transformer (`SentenceTransformer(...)[0].auto_model`); it is
    called only when the float graph must be exported. Raises ExportError when the export
    fails or its output drifts from torch's beyond MAX_EXPORT_DRIFT.
    """
    path = Path(model_path)
    key = _cache_key(path)
    float_graph = cache_dir() / f"{path.name}-{key}.onnx"
    if not float_graph.exists():
        bert = load_bert()
        try:
            _replace_atomically(lambda tmp: _export_and_check(bert, path, tmp), float_graph)
        except Exception as exc:  # noqa: BLE001 - the exporter raises many kinds
            if isinstance(exc, ExportError):
                raise
            raise ExportError(f"exporting {path.name} to ONNX failed: {exc}") from exc
    if not quantized:
        return float_graph
    int8_graph = cache_dir() / f"{path.name}-{key}-int8-{INT8_VERSION}.onnx"
    if not int8_graph.exists():
        try:
            _replace_atomically(lambda tmp: _quantize(path, float_graph, tmp), int8_graph)
        except Exception as exc:  # noqa: BLE001
            if isinstance(exc, ExportError):
                raise
            raise ExportError(f"quantizing {float_graph.name} failed: {exc}") from exc
    return int8_graph


def _export_and_check(bert: Any, model_path: Path, target: Path) -> None:
    import torch

    _export_float(bert, target)
    encoder = OnnxSentenceEncoder(target, model_path, threads=1)
    tokenizer = make_tokenizer(model_path, _read_max_seq_length(model_path))
    for text in _PROBES:
        enc = tokenizer.encode(text)
        with torch.inference_mode():
            want = bert(
                input_ids=torch.tensor([enc.ids]),
                attention_mask=torch.tensor([enc.attention_mask]),
                token_type_ids=torch.tensor([enc.type_ids]),
            ).last_hidden_state[0].mean(0).numpy()
        want = want / np.linalg.norm(want)
        drift = float(np.abs(encoder.encode_one(text) - want).max())
        if drift > MAX_EXPORT_DRIFT:
            raise ExportError(
                f"the ONNX export of {model_path.name} drifts {drift:.2e} from torch "
                f"(more than {MAX_EXPORT_DRIFT:.0e}) on {text!r}"
            )


class OnnxSentenceEncoder:
    """Texts -> L2-normalized mean-pooled rows (float32) through an exported graph.

    `threads`: how many cores to use (None: all). With the "equal_length" and "alone"
    packings that many single-threaded passes run side by side (ONNX Runtime releases the GIL
    in `run`); with "padded" one pass at a time gets that many intra-op threads. The live path
    uses 1. `spin=False` stops idle intra-op threads from busy-waiting, which on a loaded
    machine steals the CPU the event loop and PostgreSQL need (only "padded" has such threads).
    See PACKINGS for why each packing exists.
    """

    def __init__(
        self,
        graph: str | Path,
        model_path: str | Path,
        *,
        threads: int | None = None,
        spin: bool = True,
        packing: str = "equal_length",
    ) -> None:
        import onnxruntime as ort

        if packing not in PACKINGS:
            raise ValueError(f"unknown packing {packing!r}; expected one of {PACKINGS}")
        self.packing = packing
        self._workers = threads or (os.cpu_count() or 1)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.intra_op_num_threads = self._workers if packing == "padded" else 1
        options.inter_op_num_threads = 1
        if not spin:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            str(graph), options, providers=["CPUExecutionProvider"]
        )
        model_path = Path(model_path)
        self._tokenizer = make_tokenizer(model_path, _read_max_seq_length(model_path))
        self._wants_types = {i.name for i in self._session.get_inputs()} >= set(_INPUTS)
        self.graph = Path(graph)

    def _hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The last layer's token states, (rows, tokens, dimension)."""
        feed = {"input_ids": ids, "attention_mask": mask}
        if self._wants_types:
            feed["token_type_ids"] = np.zeros_like(ids)
        return self._session.run(None, feed)[0]

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        hidden = self._hidden(ids, mask)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return _unit_rows(pooled)

    def encode_one(self, text: str) -> np.ndarray:
        """One text, no padding: the live query path."""
        ids = np.asarray([self._tokenizer.encode(text).ids], dtype=np.int64)
        return self._forward(ids, np.ones_like(ids))[0]

    def encode(self, texts: list[str]) -> np.ndarray:
        """Many texts, packed as `packing` says; rows come back in the order of `texts`."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        pieces = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        if self.packing == "padded":
            return self._encode_padded(pieces, out)

        def run(rows: list[int]) -> None:
            ids = np.asarray([pieces[i] for i in rows], dtype=np.int64)
            out[rows] = self._forward(ids, np.ones_like(ids))

        self._run_packed([len(p) for p in pieces], run)
        return out

    def encode_with_spans(
        self, texts: list[str], spans: list[list[tuple[int, int]]]
    ) -> tuple[np.ndarray, list[list[np.ndarray | None]]]:
        """Each text's vector, and for each of its character spans the mean of the same
        pass's token states over the span's word pieces, L2-normalized (late chunking: a
        span's vector read in its text's context, at no extra pass). A span the tokenizer's
        truncation cut, or one holding no word piece, gets None. Packed as `encode` packs
        ("padded" runs as "equal_length": a padded pass would not change the states' meaning,
        but nothing needs it)."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if len(spans) != len(texts):
            raise ValueError(f"encode_with_spans: {len(texts)} texts but {len(spans)} span lists")
        span_out: list[list[np.ndarray | None]] = [[None] * len(s) for s in spans]
        if not texts:
            return out, span_out
        encodings = self._tokenizer.encode_batch(list(texts))
        ranges = [token_ranges(e.offsets, e.special_tokens_mask, s, truncated=bool(e.overflowing))
                  for e, s in zip(encodings, spans, strict=True)]

        def run(rows: list[int]) -> None:
            ids = np.asarray([encodings[i].ids for i in rows], dtype=np.int64)
            hidden = self._hidden(ids, np.ones_like(ids))
            out[rows] = _unit_rows(hidden.mean(axis=1))
            for r, i in enumerate(rows):
                for k, (first, stop) in enumerate(ranges[i]):
                    if stop > first:
                        span_out[i][k] = _unit_rows(hidden[r, first:stop].mean(axis=0))[0]

        self._run_packed([len(e.ids) for e in encodings], run)
        return out, span_out

    def _run_packed(self, lengths: list[int], run: Callable[[list[int]], None]) -> None:
        """`run` over the rows' batches (equal length, or one row each for "alone"), a
        single-threaded pass per worker side by side."""
        if self.packing == "alone":
            batches = [[i] for i in range(len(lengths))]
        else:
            batches = equal_length_batches(lengths)
        # the biggest passes first, so the last ones to finish are short and both cores stay busy
        batches.sort(key=lambda rows: -len(rows) * lengths[rows[0]])
        if self._workers == 1 or len(batches) == 1:
            for rows in batches:
                run(rows)
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(self._workers, len(batches))) as pool:
            list(pool.map(run, batches))

    def _encode_padded(self, pieces: list[list[int]], out: np.ndarray) -> np.ndarray:
        order = sorted(range(len(pieces)), key=lambda i: len(pieces[i]))
        for batch in token_budget_batches([len(pieces[i]) for i in order]):
            rows = [order[i] for i in batch]
            width = len(pieces[rows[-1]])  # sorted: the last is the longest
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for r, i in enumerate(rows):
                ids[r, : len(pieces[i])] = pieces[i]
                mask[r, : len(pieces[i])] = 1
            out[rows] = self._forward(ids, mask)
        return out

    @property
    def dimension(self) -> int:
        shape = self._session.get_outputs()[0].shape
        return int(shape[-1]) if isinstance(shape[-1], int) else 384


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (zero rows stay zero), float32, at least two-dimensional."""
    arr = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (arr / norms).astype(np.float32, copy=False)


def token_ranges(
    offsets: list[tuple[int, int]],
    special: list[int],
    spans: list[tuple[int, int]],
    *,
    truncated: bool = False,
) -> list[tuple[int, int]]:
    """For each character span [start, end) of a text, the [first, stop) token positions of
    the word pieces inside it, from the tokenizer's `offsets` (special tokens, which carry no
    characters, never count). In a `truncated` text a span reaching past the last token kept
    gets (0, 0), as does a span without a word piece."""
    words = [(i, a, b) for i, ((a, b), sp) in enumerate(zip(offsets, special, strict=True))
             if not sp]
    last_end = words[-1][2] if words else 0
    out: list[tuple[int, int]] = []
    for start, end in spans:
        if truncated and end > last_end:
            out.append((0, 0))
            continue
        inside = [i for i, a, b in words if a >= start and b <= end]
        out.append((inside[0], inside[-1] + 1) if inside else (0, 0))
    return out


def equal_length_batches(lengths: list[int]) -> list[list[int]]:
    """Indexes of `lengths` grouped by equal length, each group cut to at most BATCH_TOKENS
    word pieces (a text longer than the budget goes alone) and MAX_BATCH rows."""
    by_length: dict[int, list[int]] = {}
    for i, length in enumerate(lengths):
        by_length.setdefault(length, []).append(i)
    batches: list[list[int]] = []
    for length, rows in sorted(by_length.items()):
        per = max(1, min(MAX_BATCH, BATCH_TOKENS // max(length, 1)))
        batches.extend(rows[start : start + per] for start in range(0, len(rows), per))
    return batches


def token_budget_batches(sorted_lengths: list[int]) -> list[list[int]]:
    """Index ranges over ascending lengths, each padded batch within BATCH_TOKENS (a text
    longer than the budget goes alone) and MAX_BATCH rows."""
    batches: list[list[int]] = []
    current: list[int] = []
    for i, length in enumerate(sorted_lengths):
        if current and ((len(current) + 1) * length > BATCH_TOKENS or len(current) >= MAX_BATCH):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


_SESSIONS: dict[tuple[str, bool, int | None, bool], OnnxSentenceEncoder] = {}
_SESSIONS_LOCK = threading.Lock()


def shared_encoder(
    model_path: str | Path,
    load_bert: Callable[[], Any],
    *,
    quantized: bool = False,
    threads: int | None = None,
    spin: bool = True,
) -> OnnxSentenceEncoder:
    """One encoder per process and configuration: a session holds the graph's weights."""
    key = (str(model_path), quantized, threads, spin)
    with _SESSIONS_LOCK:
        encoder = _SESSIONS.get(key)
        if encoder is None:
            graph = exported_graph(model_path, load_bert, quantized=quantized)
            encoder = OnnxSentenceEncoder(
                graph,
                model_path,
                threads=threads,
                spin=spin,
                packing="alone" if quantized else "equal_length",
            )
            _SESSIONS[key] = encoder
        return encoder
