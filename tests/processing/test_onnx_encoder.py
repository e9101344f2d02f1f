"""The ONNX Runtime path gives the pipeline the model's own vectors, in the texts' order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from glyphoxa_pipelines.providers import onnx_encoder
from glyphoxa_pipelines.providers.embeddings import (
    INT8_MODEL_ID,
    SentenceTransformerEmbedder,
    bundled_model_path,
    get_embedder,
)
from glyphoxa_pipelines.providers.onnx_encoder import (
    BATCH_TOKENS,
    OnnxSentenceEncoder,
    equal_length_batches,
    token_budget_batches,
)

TEXTS = [
    "Matt: You enter the tavern. A half-orc behind the bar looks up and grunts.",
    "dragon",
    "Vax'ildan and Vex'ahlia reach Kraghammer. " * 40,  # past 256 word pieces: truncated
    "",
    "Laura: I'd like to check the door for traps before anyone touches it.",
]


def test_batches_respect_the_token_budget_and_keep_every_text() -> None:
    lengths = sorted([3, 5, 5, 40, 200, 256, 256, 256, 9000] + [12] * 700)
    batches = token_budget_batches(lengths)
    assert [i for b in batches for i in b] == list(range(len(lengths)))
    for b in batches:
        assert len(b) <= onnx_encoder.MAX_BATCH
        assert len(b) == 1 or len(b) * lengths[b[-1]] <= BATCH_TOKENS
    assert [9000] in [[lengths[i] for i in b] for b in batches]  # too long for any budget: alone


def test_equal_length_batches_hold_one_length_each_and_every_text_once() -> None:
    lengths = [5, 12, 5, 300, 12, 40, 5] + [12] * 1500
    batches = equal_length_batches(lengths)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        assert len({lengths[i] for i in b}) == 1  # no padding anywhere
        assert len(b) <= onnx_encoder.MAX_BATCH
        assert len(b) == 1 or len(b) * lengths[b[0]] <= BATCH_TOKENS
    assert [3] in batches  # longer than the budget: alone


@pytest.mark.slow  # loads the bundled model
def test_a_text_gets_the_same_vector_alone_and_in_any_batch() -> None:
    """The float encoder runs texts of one length together: a text's vector must not depend on
    the batch it lands in (1e-6), and must be what every packing gives it."""
    fast = SentenceTransformerEmbedder(backend="onnx")
    encoder = fast.onnx_encoder()
    assert encoder is not None and encoder.packing == "equal_length"
    same_length = [f"Matt: the {w} door opens onto a cold hall." for w in
                   ("red", "blue", "green", "iron", "oak", "stone", "old", "new")]
    tokenizer = onnx_encoder.make_tokenizer(Path(bundled_model_path()), 256)
    lengths = {len(tokenizer.encode(t).ids) for t in same_length}
    assert len(lengths) == 1  # one batch of eight, nothing padded
    texts = same_length + TEXTS
    batched = fast.embed(texts)
    alone = np.vstack([fast.embed([t]) for t in texts])
    assert float(np.abs(batched - alone).max()) < 1e-6
    shuffled = fast.embed(texts[::-1])[::-1]
    assert float(np.abs(batched - shuffled).max()) < 1e-6
    padded = OnnxSentenceEncoder(encoder.graph, bundled_model_path(), packing="padded")
    assert float(np.abs(batched - padded.encode(texts)).max()) < 1e-5
    with pytest.raises(ValueError, match="unknown packing 'sorted'"):
        OnnxSentenceEncoder(encoder.graph, bundled_model_path(), packing="sorted")


@pytest.mark.slow  # loads the bundled model (and exports it once per machine)
def test_onnx_vectors_are_the_torch_vectors() -> None:
    fast = SentenceTransformerEmbedder(backend="onnx")
    reference = SentenceTransformerEmbedder(backend="torch")
    got, want = fast.embed(TEXTS), reference.embed(TEXTS)
    assert fast.onnx_encoder() is not None and reference.onnx_encoder() is None
    assert got.shape == want.shape == (len(TEXTS), 384) and got.dtype == np.float32
    assert float(np.abs(got - want).max()) < 1e-5
    # batching sorts by length: each row must still be its own text's vector
    alone = np.vstack([fast.embed([t]) for t in TEXTS])
    assert float(np.abs(got - alone).max()) < 1e-5


@pytest.mark.slow
def test_the_exported_graph_is_reused_without_torch() -> None:
    SentenceTransformerEmbedder(backend="onnx").embed(["warm up"])  # exported by now

    def must_not_load() -> None:
        raise AssertionError("a cached graph must not load the torch model")

    path = onnx_encoder.exported_graph(bundled_model_path(), must_not_load)
    assert path.exists() and path.parent == onnx_encoder.cache_dir()


def test_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown embedding backend 'tensorflow'"):
        SentenceTransformerEmbedder(backend="tensorflow")


@pytest.mark.slow  # loads the bundled model (and builds the int8 graph once per machine)
def test_int8_documents_are_their_own_model_close_to_the_float_vectors() -> None:
    int8 = get_embedder("local", model=INT8_MODEL_ID)
    exact = SentenceTransformerEmbedder(backend="onnx")
    assert int8.model_id == INT8_MODEL_ID != exact.model_id and int8.dimension == 384
    got, want = int8.embed(TEXTS), exact.embed(TEXTS)
    assert got.shape == want.shape and got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosine = (got * want).sum(axis=1)
    assert float(cosine.min()) > onnx_encoder.MIN_INT8_COSINE
    assert float(np.abs(got - want).max()) > 1e-3  # quantized: not the float rows, hence the id
    alone = np.vstack([int8.embed([t]) for t in TEXTS])  # rows stay their own texts'
    assert float(np.abs(got - alone).max()) < 1e-4
    # queries of an int8 store come from the same graph, whatever precision is asked for
    assert int8.onnx_encoder(quantized=False, threads=1) is int8.onnx_encoder(threads=1)
    query = int8.onnx_encoder(threads=1).encode_one(TEXTS[0])
    assert float(query @ got[0]) > 0.9999


def test_int8_vectors_cannot_come_from_torch() -> None:
    with pytest.raises(ValueError, match="int8 vectors come from the ONNX Runtime graph only"):
        SentenceTransformerEmbedder(model_id=INT8_MODEL_ID, int8=True, backend="torch")


def test_token_ranges_map_character_spans_to_word_pieces_and_refuse_cut_spans() -> None:
    # "[CLS] matt : hi . sam : yo [SEP]" of "MATT: hi.\nSAM: yo"
    offsets = [(0, 0), (0, 4), (4, 5), (6, 8), (8, 9), (10, 13), (13, 14), (15, 17), (0, 0)]
    special = [1, 0, 0, 0, 0, 0, 0, 0, 1]
    spans = [(0, 9), (10, 17), (3, 3)]
    assert onnx_encoder.token_ranges(offsets, special, spans) == [(1, 5), (5, 8), (0, 0)]
    # truncated after "sam :": the second line lost its last piece, so it has no vector
    cut = offsets[:7] + [(0, 0)]
    assert onnx_encoder.token_ranges(cut, special[:7] + [1], spans, truncated=True)[:2] == [
        (1, 5), (0, 0)]


@pytest.mark.slow  # loads the bundled model
def test_span_vectors_are_the_mean_of_the_texts_own_token_states() -> None:
    """Late chunking: a line's vector is the unit mean of the chunk pass's token states over
    the line's word pieces, the same as torch computes, and the text's own vector is `embed`'s.
    Read in context, it is not the line embedded alone."""
    import torch

    lines = ["MATT: The innkeeper slides a silver key across the bar.",
             "LAURA: I pocket it and ask about the dragon.", "SAM: Yeah."]
    chunk = "\n".join(lines)
    spans = [(chunk.index(line), chunk.index(line) + len(line)) for line in lines]
    embedder = SentenceTransformerEmbedder(backend="onnx")
    vectors, span_vectors = embedder.embed_with_spans([chunk, "dragon"], [spans, []])
    assert np.allclose(vectors, embedder.embed([chunk, "dragon"]), atol=1e-6)
    assert span_vectors[1] == []

    tokenizer = onnx_encoder.make_tokenizer(Path(bundled_model_path()), 256)
    enc = tokenizer.encode(chunk)
    with torch.inference_mode():
        hidden = embedder.model[0].auto_model(
            input_ids=torch.tensor([enc.ids]), attention_mask=torch.tensor([enc.attention_mask]),
            token_type_ids=torch.tensor([enc.type_ids]),
        ).last_hidden_state[0].numpy()
    alone = embedder.embed(lines)
    for k, (start, end) in enumerate(spans):
        inside = [i for i, (a, b) in enumerate(enc.offsets)
                  if not enc.special_tokens_mask[i] and a >= start and b <= end]
        want = hidden[inside].mean(axis=0)
        want /= np.linalg.norm(want)
        got = span_vectors[0][k]
        assert got is not None and np.abs(got - want).max() < 1e-4
        assert float(got @ alone[k]) < 0.99  # context moved it: not the line alone
    torch_vectors, torch_spans = SentenceTransformerEmbedder(backend="torch").embed_with_spans(
        [chunk], [spans])
    assert np.abs(torch_vectors - vectors[:1]).max() < 1e-4
    assert all(np.abs(a - b).max() < 1e-4 for a, b in zip(torch_spans[0], span_vectors[0],
                                                          strict=True))
