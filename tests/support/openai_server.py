"""A small OpenAI-compatible HTTP server on 127.0.0.1 for tests: the one allowed stand-in.

The real ``langchain-openai`` / ``openai`` clients talk to it over HTTP, so retries, timeouts,
streaming and usage accounting are exercised for real. Tests script its replies:

    with OpenAIStub() as stub:
        stub.queue(status=500)                      # first call fails
        stub.queue(content="答え [1]")               # then a success
        settings = make_settings(..., openai_base_url=stub.base_url, openai_api_key="test")

Unscripted calls get ``stub.default`` (a ``Reply``; its content is ``default_content`` or a reply
computed by ``responder(request_json)``). Every request body is recorded in ``stub.requests``.

Misbehaviours, per reply (``queue(...)``) or for every call (``stub.default = Reply(...)``):
``delay`` (stall before answering), ``hang`` (never answer until the server stops),
``status=429`` with ``retry_after``, ``status=500``, ``truncate_after`` (a stream that stops
after that many chunks, without a finish reason or ``[DONE]``), ``content=""`` (an empty
completion), a very long ``content``, ``known_models`` (any other model name gets HTTP 404), and
for streams ``tokens_per_sec`` (chunks of ``chunk_chars`` characters at that rate).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    content: str | None = None
    prompt_tokens: int = 120
    completion_tokens: int = 40
    delay: float = 0.0  # seconds before the response starts
    hang: bool = False  # never respond (until the server shuts down)
    retry_after: float | None = None  # the Retry-After header of an error response
    truncate_after: int | None = None  # streams: stop after this many content chunks
    tokens_per_sec: float = 0.0  # streams: chunk rate (0: as fast as possible)
    chunk_chars: int = 2  # streams: characters per chunk ("token")


class OpenAIStub:
    def __init__(
        self,
        default_content: str = "テスト応答です。",
        responder: Callable[[dict[str, Any]], str] | None = None,
        known_models: set[str] | None = None,
    ) -> None:
        self.default_content = default_content
        self.responder = responder
        self.known_models = known_models
        self.default = Reply()
        self.requests: list[dict[str, Any]] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with stub._lock:
                    stub.requests.append({"path": self.path, "body": body})
                    reply = stub._queue.popleft() if stub._queue else replace(stub.default)
                if reply.hang:
                    stub._stopping.wait(120)
                    self.close_connection = True
                    return
                if reply.delay:
                    stub._stopping.wait(reply.delay)
                model = body.get("model", "stub")
                if stub.known_models is not None and model not in stub.known_models:
                    self._send(
                        404,
                        {
                            "error": {
                                "message": f"The model `{model}` does not exist.",
                                "type": "invalid_request_error",
                                "code": "model_not_found",
                            }
                        },
                    )
                    return
                if reply.status != 200:
                    headers = {}
                    if reply.retry_after is not None:
                        headers["Retry-After"] = f"{reply.retry_after:g}"
                    self._send(
                        reply.status,
                        {"error": {"message": "stub error", "type": "server_error"}},
                        headers,
                    )
                    return
                if self.path.endswith("/embeddings"):
                    inputs = body.get("input") or []
                    inputs = [inputs] if isinstance(inputs, str) else inputs
                    data = [
                        {"object": "embedding", "index": i, "embedding": [1.0, 0.0, 0.0, float(i)]}
                        for i, _ in enumerate(inputs)
                    ]
                    self._send(
                        200,
                        {
                            "object": "list",
                            "data": data,
                            "model": body.get("model"),
                            "usage": {"prompt_tokens": 1, "total_tokens": 1},
                        },
                    )
                    return
                content = reply.content
                if content is None:
                    content = stub.responder(body) if stub.responder else stub.default_content
                usage = {
                    "prompt_tokens": reply.prompt_tokens,
                    "completion_tokens": reply.completion_tokens,
                    "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                }
                if body.get("stream"):
                    self._stream(model, content, usage, reply)
                    return
                self._send(
                    200,
                    {
                        "id": "chatcmpl-stub",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": model,
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": usage,
                    },
                )

            def _chunk(self, model: str, delta: dict, finish: str | None, usage=None) -> bytes:
                payload = {
                    "id": "chatcmpl-stub",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
                    if usage is None
                    else [],
                }
                if usage is not None:
                    payload["usage"] = usage
                return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()

            def _stream(self, model: str, content: str, usage: dict, reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                step = max(1, reply.chunk_chars)
                pieces = [content[i : i + step] for i in range(0, len(content), step)]
                gap = 1.0 / reply.tokens_per_sec if reply.tokens_per_sec else 0.0
                try:
                    self.wfile.write(self._chunk(model, {"role": "assistant", "content": ""}, None))
                    for n, piece in enumerate(pieces):
                        if reply.truncate_after is not None and n >= reply.truncate_after:
                            self.wfile.flush()
                            return  # the connection closes mid-answer
                        if gap and stub._stopping.wait(gap):
                            return
                        self.wfile.write(self._chunk(model, {"content": piece}, None))
                        self.wfile.flush()
                    self.wfile.write(self._chunk(model, {}, "stop"))
                    self.wfile.write(self._chunk(model, {}, None, usage))
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up (deadline): nothing to do

            def _send(self, status: int, payload: dict[str, Any], headers=None) -> None:
                data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def queue(self, **reply: Any) -> None:
        with self._lock:
            self._queue.append(Reply(**reply))

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

    def __enter__(self) -> OpenAIStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
