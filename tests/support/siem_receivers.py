"""SIEM receivers on 127.0.0.1 for the shipping tests and the bench: real sockets, real HTTP.

``SyslogReceiver`` reads RFC 6587 octet-counted RFC 5424 messages over TCP (optionally TLS) and
closes a connection once its client has half-closed and everything was read. ``HttpReceiver``
serves a Splunk HEC endpoint (``/services/collector/event``), an Elasticsearch ``/_bulk``
(``create`` with ``_id``: 409 for an id it holds) and a generic webhook (``/hook``). Both can be
stopped and started again on the same port, and the HTTP one can refuse (400) records whose
query holds a marker, fail (503) after storing, or answer slowly.
"""

from __future__ import annotations

import json
import re
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


SD_HASH = re.compile(rb'hash="([0-9a-f]+)"')


def parse_frames(data: bytes) -> list[bytes]:
    """Split octet-counted frames ("LEN SP MSG"); raises ValueError on a malformed stream."""
    frames = []
    while data:
        length, _, rest = data.partition(b" ")
        n = int(length)
        frames.append(rest[:n])
        if len(rest) < n:
            raise ValueError("truncated frame")
        data = rest[n:]
    return frames


class SyslogReceiver:
    def __init__(self, port: int | None = None, tls: tuple[Path, Path] | None = None) -> None:
        self.port = port or free_port()
        self.tls = tls
        self.messages: list[bytes] = []
        self.connections = 0
        self._lock = threading.Lock()
        self._server: socket.socket | None = None
        self._thread: threading.Thread | None = None

    @property
    def hashes(self) -> list[str]:
        with self._lock:
            return [m.group(1).decode() for f in self.messages if (m := SD_HASH.search(f))]

    def records(self) -> list[dict[str, Any]]:
        with self._lock:
            return [json.loads(f.split(b"\xef\xbb\xbf", 1)[1]) for f in self.messages]

    def start(self) -> SyslogReceiver:
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", self.port))
        server.listen(16)
        server.settimeout(0.2)
        self._server = server
        self._thread = threading.Thread(target=self._serve, args=(server,), daemon=True)
        self._thread.start()
        return self

    def _serve(self, server: socket.socket) -> None:
        context = None
        if self.tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(self.tls[0]), str(self.tls[1]))
        while self._server is server:
            try:
                conn, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._handle, args=(conn, context), daemon=True).start()

    def _handle(self, conn: socket.socket, context: ssl.SSLContext | None) -> None:
        try:
            conn.settimeout(5)
            if context is not None:
                conn = context.wrap_socket(conn, server_side=True)
            data = b""
            while chunk := conn.recv(65536):
                data += chunk
            frames = parse_frames(data)
            with self._lock:
                self.messages.extend(frames)
                self.connections += 1
        except (OSError, ValueError):
            pass
        finally:
            conn.close()

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        if self._thread is not None:
            self._thread.join(2)


class HttpReceiver:
    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self.received: dict[str, list[dict[str, Any]]] = {"hec": [], "bulk": [], "hook": []}
        self.elastic: dict[str, dict[str, Any]] = {}  # _id -> _source (the index)
        self.refuse_marker: str | None = None
        self.fail_after_store = 0  # this many requests are stored, then answered 503
        self.delay = 0.0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def hashes(self, kind: str) -> list[str]:
        with self._lock:
            return [r["hash"] for r in self.received[kind]]

    def start(self) -> HttpReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if receiver.delay:
                    time.sleep(receiver.delay)
                status, answer = receiver._answer(self.path, dict(self.headers), body)
                data = json.dumps(answer).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass

        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def _refused(self, record: dict[str, Any]) -> bool:
        return bool(self.refuse_marker) and self.refuse_marker in str(record.get("query", ""))

    def _answer(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any]:
        with self._lock:
            self.requests.append((path, headers, body))
            if path == "/_bulk":
                return self._bulk(body)
            if path == "/services/collector/event":
                decoder, text, events, pos = json.JSONDecoder(), body.decode(), [], 0
                while pos < len(text):
                    event, pos = decoder.raw_decode(text, pos)
                    events.append(event)
                    while pos < len(text) and text[pos].isspace():
                        pos += 1
                for n, event in enumerate(events):
                    if self._refused(event["event"]):
                        answer = {"text": "Invalid data format", "code": 6}
                        return 400, {**answer, "invalid-event-number": n}
                records = [e["event"] for e in events]
                kind = "hec"
            elif path == "/hook":
                records = json.loads(body)["records"]
                if any(self._refused(r) for r in records):
                    return 400, {"error": "refused"}
                kind = "hook"
            else:
                return 404, {"error": "not found"}
            self.received[kind].extend(records)
            if self.fail_after_store:
                self.fail_after_store -= 1
                return 503, {"error": "stored, but the answer is lost"}
            return 200, {"text": "Success", "code": 0}

    def _bulk(self, body: bytes) -> tuple[int, Any]:
        lines = body.decode().splitlines()
        items, errors = [], False
        for action, source in zip(lines[::2], lines[1::2], strict=True):
            meta = json.loads(action)["create"]
            record = json.loads(source)
            self.received["bulk"].append(record)
            if self._refused(record):
                items.append({"create": {"status": 400, "error": {"type": "mapper_parsing"}}})
                errors = True
            elif meta["_id"] in self.elastic:
                items.append({"create": {"_id": meta["_id"], "status": 409}})
                errors = True
            else:
                self.elastic[meta["_id"]] = record
                items.append({"create": {"_id": meta["_id"], "status": 201}})
        return 200, {"errors": errors, "items": items}
