"""Stage 2 against a local OpenAI-compatible HTTP server, through the real `openai` client.

The server runs in a thread on 127.0.0.1 (free port) and answers by the requested model name:
a model that fixes names properly, one that hallucinates, one that answers garbage, one that
answers the wrong JSON shape, one that wraps JSON in a code fence, and one that fails (HTTP 500).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from glyphoxa_pipelines.correction import (
    CorrectionConfig,
    LLMCorrector,
    NameIndex,
    correct,
    llm_corrections,
)
from glyphoxa_pipelines.correction.llm_corrector import parse_json_object

ENTITIES = ["Ysolde", "Eldrinax", "Ironhold", "Thalindor"]
# What a good model would fix in our scripted utterances.
FIXES = {"is old": "Ysolde", "tally n door": "Thalindor"}


def _fix(text: str) -> tuple[str, list[dict[str, str]]]:
    declared = []
    for wrong, right in FIXES.items():
        if wrong in text:
            text = text.replace(wrong, right)
            declared.append({"original": wrong, "replacement": right})
    return text, declared


def _answer(model: str, text: str) -> str:
    fixed, declared = _fix(text)
    if model == "fixer":
        return json.dumps({"text": fixed, "corrections": declared})
    if model == "fenced":
        return (
            "Sure! Here you go:\n```json\n"
            + json.dumps({"text": fixed, "corrections": declared})
            + "\n```"
        )
    if model == "hallucinator":
        wild = (
            fixed.replace("about", "About", 1)
            .replace("dragon", "wyrm")
            .replace("tavern", "Eldrinax")
        )
        wild = wild.replace("Eldrinax asked", "Eldrinacks asked")
        wild += " And then they all died."
        return json.dumps(
            {
                "text": wild.replace("dragon", "Dragan"),
                "corrections": [
                    *declared,
                    {"original": "tavern", "replacement": "Eldrinax"},  # implausible
                    {"original": "Eldrinax", "replacement": "Eldrinacks"},  # stage 1 span
                ],
            }
        )
    if model == "highconf":
        # a plausible, declared change to a word the STT was sure about
        return json.dumps(
            {
                "text": fixed.replace("dragon", "Dragan"),
                "corrections": [*declared, {"original": "dragon", "replacement": "Dragan"}],
            }
        )
    if model == "liar":
        # declares a fix its own text does not contain
        return json.dumps({"text": text, "corrections": declared})
    if model == "garbage":
        return "I think the answer is Ysolde!!! {not: json,,"
    if model == "wrong-shape":
        return json.dumps({"corrected": 42, "corrections": "none"})
    if model == "no-declarations":
        return json.dumps({"text": fixed, "corrections": []})
    raise AssertionError(model)


@dataclass
class FakeServer:
    port: int
    requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def corrector(self, model: str) -> LLMCorrector:
        return LLMCorrector(model=model, base_url=self.base_url, api_key="test", timeout_s=10)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeServer]:
    state = FakeServer(port=0)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append({"path": self.path, **body})
            if body["model"] == "error":
                payload = json.dumps({"error": {"message": "boom", "type": "server_error"}})
                self._send(500, payload)
                return
            user = json.loads(body["messages"][-1]["content"])
            content = _answer(body["model"], user["text"])
            self._send(
                200,
                json.dumps(
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                ),
            )

        def _send(self, status: int, payload: str) -> None:
            data = payload.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


INDEX = NameIndex(ENTITIES)
RAW = "elder nacks asked is old about the dragon in the tavern"
#            elder nacks asked is   old  about the dragon in  the tavern
CONFIDENCES = [0.3, 0.2, 0.95, 0.3, 0.4, 0.9, 0.99, 0.99, 0.9, 0.9, 0.3]


def test_good_model_fixes_low_confidence_spans(server: FakeServer) -> None:
    before = len(server.requests)
    result = correct(RAW, INDEX, CONFIDENCES, llm=server.corrector("fixer"))
    assert result.text == "Eldrinax asked Ysolde about the dragon in the tavern"
    assert result.raw_text == RAW
    llm = [c for c in result.corrections if c.method == "llm"]
    assert [(c.original, c.replacement, c.entity) for c in llm] == [("is old", "Ysolde", "Ysolde")]
    assert RAW[llm[0].start : llm[0].end] == "is old"  # offsets into the raw text
    assert llm[0].score >= 0.7
    request = server.requests[before]
    assert request["path"] == "/v1/chat/completions"
    assert request["temperature"] == pytest.approx(0.1)
    assert request["response_format"] == {"type": "json_object"}
    system = request["messages"][0]["content"]
    assert all(name in system for name in ENTITIES)
    sent = json.loads(request["messages"][-1]["content"])
    assert sent["text"] == "Eldrinax asked is old about the dragon in the tavern"  # stage-1 text
    assert sent["flagged"] == ["is", "old", "tavern"]  # stage-1 spans are not sent


def test_fenced_json_answers_are_accepted(server: FakeServer) -> None:
    result = correct(RAW, INDEX, CONFIDENCES, llm=server.corrector("fenced"))
    assert result.text == "Eldrinax asked Ysolde about the dragon in the tavern"


def test_hallucinating_model_is_contained(server: FakeServer) -> None:
    result = correct(RAW, INDEX, CONFIDENCES, llm=server.corrector("hallucinator"))
    # undeclared edits reverted, implausible and stage-1 edits rejected, insertion dropped
    assert result.text == "Eldrinax asked Ysolde about the dragon in the tavern"
    assert [c.method for c in result.corrections] == ["phonetic", "llm"]


def test_declared_change_to_a_confident_word_is_rejected(server: FakeServer) -> None:
    result = correct(RAW, INDEX, CONFIDENCES, llm=server.corrector("highconf"))
    assert result.text == "Eldrinax asked Ysolde about the dragon in the tavern"


def test_declared_fix_missing_from_the_models_text_is_ignored(server: FakeServer) -> None:
    result = correct(RAW, INDEX, CONFIDENCES, llm=server.corrector("liar"))
    assert result.text == "Eldrinax asked is old about the dragon in the tavern"


def test_undeclared_changes_are_all_reverted(server: FakeServer) -> None:
    result = correct(RAW, INDEX, CONFIDENCES, llm=server.corrector("no-declarations"))
    assert result.text == "Eldrinax asked is old about the dragon in the tavern"


@pytest.mark.parametrize("model", ["garbage", "wrong-shape", "error"])
def test_failed_or_unparseable_answers_leave_the_text(server: FakeServer, model: str) -> None:
    before = len(server.requests)
    result = correct(RAW, INDEX, CONFIDENCES, llm=server.corrector(model))
    assert len(server.requests) > before  # the model was asked
    assert result.text == "Eldrinax asked is old about the dragon in the tavern"
    assert [c.method for c in result.corrections] == ["phonetic"]


def test_unreachable_endpoint_leaves_the_text() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = LLMCorrector(model="fixer", base_url=f"http://127.0.0.1:{port}/v1", timeout_s=2)
    started = time.perf_counter()
    result = correct(RAW, INDEX, CONFIDENCES, llm=dead)
    assert result.text == "Eldrinax asked is old about the dragon in the tavern"
    assert time.perf_counter() - started < 10


def test_short_utterances_and_confident_words_skip_the_model(server: FakeServer) -> None:
    llm = server.corrector("fixer")
    before = len(server.requests)
    assert correct("is old", INDEX, [0.1, 0.1], llm=llm).text == "is old"
    sure = [0.99] * 11
    assert correct(RAW, INDEX, sure, llm=llm).text.startswith("Eldrinax asked is old")
    assert len(server.requests) == before


def test_without_confidences_entity_like_spans_are_sent(server: FakeServer) -> None:
    before = len(server.requests)
    text = "then Thalindor met the zorvath near tally n door and Ironhold"
    result = correct(text, INDEX, llm=server.corrector("fixer"))
    sent = json.loads(server.requests[before]["messages"][-1]["content"])
    assert sent["flagged"] == ["zorvath"]  # not the names heard right, not ordinary words
    assert result.text == text  # "tally n door" was not flagged: the model may not touch it


def test_mismatched_confidences_fall_back_to_entity_like_spans(server: FakeServer) -> None:
    before = len(server.requests)
    text = "elder nacks asked zorvath about the dragon"
    correct(text, INDEX, [0.1, 0.2], llm=server.corrector("fixer"))
    sent = json.loads(server.requests[before]["messages"][-1]["content"])
    assert sent["flagged"] == ["zorvath"]


def test_stage_two_is_off_without_an_endpoint(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("GLYPHOXA_LLM_BASE_URL", "GLYPHOXA_LLM_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert LLMCorrector.from_env() is None
    before = len(server.requests)
    assert correct(RAW, INDEX, CONFIDENCES).text.startswith("Eldrinax asked is old")
    assert len(server.requests) == before
    monkeypatch.setenv("GLYPHOXA_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("GLYPHOXA_LLM_MODEL", "fixer")
    configured = LLMCorrector.from_env()
    assert configured is not None and configured.model == "fixer"
    assert correct(RAW, INDEX, CONFIDENCES, llm=configured).text.startswith("Eldrinax asked Ysolde")


def test_llm_corrections_directly_with_custom_threshold(server: FakeServer) -> None:
    strict = CorrectionConfig(phonetic_threshold=0.9)
    found = llm_corrections(
        "we asked is old about it",
        "we asked is old about it",
        [],
        [],
        INDEX,
        [0.9, 0.9, 0.1, 0.1, 0.9, 0.9],
        server.corrector("fixer"),
        strict,
    )
    assert found == []  # "is old" → "Ysolde" scores 0.82 < 0.9


def test_parse_json_object() -> None:
    assert parse_json_object('{"a": 1}') == {"a": 1}
    assert parse_json_object('noise {"a": {"b": 2}} trailing') == {"a": {"b": 2}}
    assert parse_json_object('```json\n{"a": 1}\n```') == {"a": 1}
    for bad in ["", "   ", "[1, 2]", "{not json", "null"]:
        assert parse_json_object(bad) is None
