"""A small OpenAI-compatible HTTP server on 127.0.0.1 for tests: the one allowed stand-in.

The real ``langchain-openai`` / ``openai`` clients talk to it over HTTP, so retries, timeouts and
usage accounting are exercised for real. Tests script its replies:

    with OpenAIStub() as stub:
        stub.queue(status=500)                      # first call fails
        stub.queue(content="答え [1]")               # then a success
        settings = make_settings(..., openai_base_url=stub.base_url, openai_api_key="test")

Unscripted calls get ``default_content`` (or a reply computed by ``responder(request_json)``).
Every request body is recorded in ``stub.requests``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    content: str | None = None
    prompt_tokens: int = 120
    completion_tokens: int = 40
    delay: float = 0.0


class OpenAIStub:
    def __init__(
        self,
        default_content: str = "テスト応答です。",
        responder: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        self.default_content = default_content
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with stub._lock:
                    stub.requests.append({"path": self.path, "body": body})
                    reply = stub._queue.popleft() if stub._queue else Reply()
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.status != 200:
                    self._send(
                        reply.status, {"error": {"message": "stub error", "type": "server_error"}}
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
                self._send(
                    200,
                    {
                        "id": "chatcmpl-stub",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "stub"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {
                            "prompt_tokens": reply.prompt_tokens,
                            "completion_tokens": reply.completion_tokens,
                            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                        },
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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
        self._server.shutdown()
        self._server.server_close()
