"""A local OpenAI-compatible chat server that streams (server-sent events), with tool calls:
the voice loop's LLM in tests and in the bench, reached through the real `openai` client.

`respond(body)` decides each answer: `{"content": text}` or `{"tool_calls": [{"name": ...,
"arguments": {...}}]}`. The default calls the first offered tool once, then answers in words
that quote the tool's result, so a test can see the result reached the model. Content is
streamed a few characters per event, tool arguments in two fragments, as real servers do.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = dict[str, Any]


def scripted_reply(body: dict[str, Any]) -> Reply:
    """Call a memory tool first (`memory__search_sessions` when offered), then answer."""
    messages = body.get("messages", [])
    tools = [t["function"]["name"] for t in body.get("tools") or []]
    if messages and messages[-1].get("role") == "tool":
        result = messages[-1]["content"]
        return {"content": f"Aye, I remember that. It was a dark business. {result[:60]}"}
    if tools:
        name = "memory__search_sessions" if "memory__search_sessions" in tools else tools[0]
        question = messages[-1]["content"] if messages else ""
        args = {"query": question} if name.endswith("search_sessions") else {}
        return {"tool_calls": [{"name": name, "arguments": args}]}
    return {"content": "Mind the sparks, traveller. I have work to do."}


def _events(reply: Reply, model: str) -> Iterator[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    calls = reply.get("tool_calls") or []
    for i, call in enumerate(calls):
        args = json.dumps(call.get("arguments", {}))
        half = len(args) // 2
        yield chunk({"tool_calls": [{"index": i, "id": f"call_{i}", "type": "function",
                                     "function": {"name": call["name"],
                                                  "arguments": args[:half]}}]})
        yield chunk({"tool_calls": [{"index": i, "function": {"arguments": args[half:]}}]})
    text = reply.get("content") or ""
    for start in range(0, len(text), 8):
        yield chunk({"content": text[start:start + 8]})
    yield chunk({}, "tool_calls" if calls else "stop")


class StreamingChatStub:
    def __init__(self, respond: Callable[[dict[str, Any]], Reply] = scripted_reply) -> None:
        self.respond = respond
        self.requests: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                stub.requests.append(body)
                if not self.path.endswith("/chat/completions"):
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for event in _events(stub.respond(body), body.get("model", "stub")):
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
