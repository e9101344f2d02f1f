"""A local OpenAI-compatible server (chat, embeddings, speech, transcription) for tests of the HTTP providers:
a real socket and the real wire format, so retries, timeouts and parsing run as in production."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class OpenAIStub:
    """A real HTTP server speaking the OpenAI chat/embeddings/speech wire format.

    `chat`, `embed`, `speech` and `transcribe` are replaceable callables; `fail_next` makes the
    next N requests answer 500 (to exercise retries); `requests` records every request body (a
    multipart upload as its form fields, the file as bytes).
    """

    def __init__(self) -> None:
        self.chat: Callable[[dict[str, Any]], str] = lambda body: "{}"
        self.embed: Callable[[list[str]], list[list[float]]] = lambda texts: [
            [1.0, 0.0, 0.0] for _ in texts
        ]
        self.speech: Callable[[dict[str, Any]], bytes] = lambda body: b"ID3-stub-audio"
        self.transcribe: Callable[[dict[str, Any]], str] = lambda form: "stub transcript"
        self.fail_next = 0
        self.requests: list[tuple[str, dict[str, Any]]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                content_type = self.headers.get("Content-Type", "")
                if content_type.startswith("multipart/form-data"):
                    body = _form_fields(content_type, raw)
                else:
                    body = json.loads(raw or b"{}")
                stub.requests.append((self.path, body))
                if stub.fail_next > 0:
                    stub.fail_next -= 1
                    self._send(500, {"error": {"message": "try again", "type": "server_error"}})
                    return
                if self.path.endswith("/chat/completions"):
                    content = stub.chat(body)
                    self._send(200, {
                        "id": "chatcmpl-stub", "object": "chat.completion", "created": 0,
                        "model": body.get("model", "stub"),
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": content}}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    })
                elif self.path.endswith("/embeddings"):
                    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    vectors = stub.embed(inputs)
                    self._send(200, {
                        "object": "list", "model": body.get("model", "stub"),
                        "data": [{"object": "embedding", "index": i, "embedding": v}
                                 for i, v in enumerate(vectors)],
                        "usage": {"prompt_tokens": 1, "total_tokens": 1},
                    })
                elif self.path.endswith("/audio/speech"):
                    self._send_bytes(200, stub.speech(body), "audio/mpeg")
                elif self.path.endswith("/audio/transcriptions"):
                    self._send(200, {"text": stub.transcribe(body)})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                self._send_bytes(status, json.dumps(payload).encode(), "application/json")

            def _send_bytes(self, status: int, data: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _form_fields(content_type: str, raw: bytes) -> dict[str, Any]:
    """A multipart/form-data body as {name: text, or bytes for a file}."""
    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    fields: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True) or b""
        fields[str(name)] = payload if part.get_filename() else payload.decode()
    return fields
