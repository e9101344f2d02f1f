from __future__ import annotations

import numpy as np
import pytest

from glyphoxa_pipelines.providers.embeddings import (
    DEFAULT_MODEL_ID,
    INT8_LATE_MODEL_ID,
    INT8_MODEL_ID,
    LATE_MODEL_ID,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    get_embedder,
)
from glyphoxa_pipelines.providers.llm import ChatLLM, LLMOutputError, get_llm, parse_json_object


@pytest.fixture(scope="module")
def local() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


@pytest.mark.slow  # loads the bundled model
def test_bundled_minilm_offline(local) -> None:
    assert (local.model_id, local.dimension, local.max_tokens) == ("all-MiniLM-L6-v2", 384, 256)
    vectors = local.embed([
        "The old wizard lives in a tower.",
        "An elderly sorcerer resides in a spire.",
        "Roll for initiative, the goblins attack!",
    ])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert local.embed([]).shape == (0, 384)


@pytest.mark.slow  # loads the bundled model
def test_token_count_is_the_models_own(local) -> None:
    text = "Vax'ildan and Vex'ahlia reach Kraghammer."
    expected = len(local.model.tokenizer(text)["input_ids"])  # transformers tokenizer
    assert local.count_tokens(text) == expected
    assert local.count_tokens("") == 2  # [CLS] [SEP]
    long = "word " * 600
    assert local.count_tokens(long) == 602  # no truncation hides an over-long text
    assert local.count_tokens_batch([text, ""]) == [expected, 2]


def test_factory() -> None:
    assert isinstance(get_embedder(), SentenceTransformerEmbedder)
    assert isinstance(get_embedder("local", model="all-MiniLM-L6-v2"), SentenceTransformerEmbedder)
    remote = get_embedder("openai", model="nomic-embed-text", dimension=3, base_url="http://x/v1")
    assert isinstance(remote, OpenAIEmbedder) and remote.model_id == "nomic-embed-text"
    with pytest.raises(ValueError):
        get_embedder("openai", model="m")
    with pytest.raises(ValueError):
        get_embedder("nope")


def test_each_bundled_model_id_says_how_its_documents_are_made() -> None:
    """The id is the recipe: int8 graph or float, turns read off chunks (late) or alone."""
    flags = {
        model: (e.model_id, e.int8, e.late_turns, e.model_path)
        for model in (DEFAULT_MODEL_ID, INT8_MODEL_ID, LATE_MODEL_ID, INT8_LATE_MODEL_ID)
        for e in [get_embedder("local", model=model)]
    }
    assert flags == {
        DEFAULT_MODEL_ID: (DEFAULT_MODEL_ID, False, False, None),
        INT8_MODEL_ID: (INT8_MODEL_ID, True, False, None),
        LATE_MODEL_ID: (LATE_MODEL_ID, False, True, None),
        INT8_LATE_MODEL_ID: (INT8_LATE_MODEL_ID, True, True, None),
    }


@pytest.mark.slow  # real backoff waits
def test_openai_compatible_embeddings_with_retry(openai_stub) -> None:
    openai_stub.embed = lambda texts: [[3.0, 4.0, 0.0] for _ in texts]
    openai_stub.fail_next = 2  # two 500s, then success: backoff retries
    embedder = OpenAIEmbedder(model="m", dimension=3, base_url=openai_stub.base_url,
                              api_key="k", batch_size=2)
    vectors = embedder.embed(["a", "b", "c"])
    assert vectors.shape == (3, 3)
    assert np.allclose(vectors[0], [0.6, 0.8, 0.0])
    assert [p for p, _ in openai_stub.requests].count("/v1/embeddings") == 4
    assert embedder.count_tokens("hello there") >= 2


def test_openai_embeddings_reject_wrong_dimension(openai_stub) -> None:
    embedder = OpenAIEmbedder(model="m", dimension=5, base_url=openai_stub.base_url, api_key="k")
    with pytest.raises(ValueError, match="shape"):
        embedder.embed(["a"])


def test_chat_llm_json_and_errors(openai_stub, monkeypatch) -> None:
    openai_stub.chat = lambda body: 'Sure! {"answer": 42} Hope that helps.'
    monkeypatch.setenv("GLYPHOXA_LLM_API_KEY", "from-env")
    llm = get_llm(model="stub", base_url=openai_stub.base_url)
    assert llm is not None and get_llm(model=None) is None
    assert llm.complete_json("sys", "user") == {"answer": 42}
    body = openai_stub.requests[-1][1]
    assert body["response_format"] == {"type": "json_object"} and body["temperature"] == 0.0
    openai_stub.chat = lambda body: "never json"
    assert llm.complete_json("sys", "user") is None
    with pytest.raises(LLMOutputError, match="did not return a JSON object"):
        llm.complete_json("sys", "user", required=True)
    openai_stub.fail_next = 1
    openai_stub.chat = lambda body: '{"ok": true}'
    assert ChatLLM(model="m", base_url=openai_stub.base_url).complete_json("s", "u") == {
        "ok": True
    }


def test_parse_json_object_variants() -> None:
    assert parse_json_object('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_object('text {"a": {"b": [1, 2]}} more') == {"a": {"b": [1, 2]}}
    assert parse_json_object("[1, 2]") is None
    assert parse_json_object("") is None
