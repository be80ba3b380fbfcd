"""Delivering batches of audit records to one SIEM destination: the wire formats, nothing else.

A sink's ``send(batch)`` returns when the whole batch was accepted and raises
``DeliveryError`` otherwise, saying how many leading records were accepted (``delivered``) and
whether trying again may help (``retryable``: down, slow, 429/5xx) or not (refused: 4xx). The
shipper (``core.audit_ship``) owns offsets, retries and backoff. Every record goes out whole
(already masked in the log) with its ``hash``, the idempotency key a SIEM deduplicates on:

- syslog: RFC 5424 (``<PRI>1 TIMESTAMP HOST APP - audit [wbaudit@32473 hash=.. file=.. line=..]
  BOM{json}``), octet-counted (RFC 6587) over TCP or TLS. TCP has no acknowledgement, so with
  ``confirm_close`` a batch goes over its own connection that is half-closed after sending; it
  counts as delivered once the receiver, having read everything, closes its side.
- splunk_hec: one HEC event per record, ``Authorization: Splunk <token>``; search with
  ``| dedup hash``.
- elastic_bulk: ``create`` with ``_id`` = hash: a record sent twice is answered 409 and counts
  as delivered, so the index holds each record once.
- webhook: ``{"records": [...]}`` with ``Idempotency-Key`` = sha256 of the batch's hashes.
"""

from __future__ import annotations

import hashlib
import json
import socket
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Protocol

from core.errors import WorkbenchError
from core.schemas.shipping import ShipDestination

SD_ID = "wbaudit@32473"  # 32473: the private enterprise number reserved for examples (RFC 5612)
EXCERPT = 200


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One audit record on its way: where it is in the log and what it is."""

    file: str
    line: int  # 1-based
    end: int  # byte offset just after the line
    record: dict[str, Any]

    @property
    def hash(self) -> str:
        return str(self.record.get("hash") or "")

    def where(self) -> str:
        return f"{self.file} {self.line} 行目"


class DeliveryError(WorkbenchError):
    """A batch was not (wholly) accepted; ``delivered`` leading records were."""

    def __init__(self, user_message: str, *, retryable: bool, delivered: int = 0) -> None:
        super().__init__(user_message)
        self.retryable = retryable
        self.delivered = delivered


class Sink(Protocol):
    def send(self, batch: list[Outgoing]) -> None: ...


def _ssl_context(dest: ShipDestination) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(dest.ca_file) if dest.ca_file else None)


def _record_json(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


# --- syslog ----------------------------------------------------------------------------


def _sd_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("]", "\\]")


def syslog_frame(item: Outgoing, dest: ShipDestination, hostname: str) -> bytes:
    """One RFC 5424 message (severity informational) with RFC 6587 octet-counting framing."""
    pri = dest.facility * 8 + 6
    timestamp = str(item.record.get("timestamp") or "-")
    sd = f'[{SD_ID} hash="{_sd_value(item.hash)}" file="{_sd_value(item.file)}" line="{item.line}"]'
    head = f"<{pri}>1 {timestamp} {hostname} {dest.app_name} - audit {sd} "
    message = head.encode("ascii", "replace") + b"\xef\xbb\xbf" + _record_json(item.record).encode()
    return str(len(message)).encode("ascii") + b" " + message


def _hostname() -> str:
    name = socket.gethostname() or "-"
    printable = "".join(c for c in name if "!" <= c <= "~")
    return printable[:255] or "-"


class SyslogSink:
    def __init__(self, dest: ShipDestination) -> None:
        self.dest = dest
        self.hostname = _hostname()

    def send(self, batch: list[Outgoing]) -> None:
        dest = self.dest
        payload = b"".join(syslog_frame(item, dest, self.hostname) for item in batch)
        try:
            raw = socket.create_connection((dest.host, dest.port), timeout=dest.timeout_sec)
        except OSError as exc:
            raise DeliveryError(f"接続できません（{exc}）", retryable=True) from exc
        try:
            sock: socket.socket = raw
            if dest.tls:
                sock = _ssl_context(dest).wrap_socket(raw, server_hostname=dest.host)
            sock.sendall(payload)
            if dest.confirm_close:
                sock.shutdown(socket.SHUT_WR)  # "that is all": the receiver closes once read
                while sock.recv(4096):
                    pass
        except ssl.SSLCertVerificationError as exc:
            raise DeliveryError(f"TLS 証明書を検証できません（{exc}）", retryable=False) from exc
        except TimeoutError as exc:
            raise DeliveryError(
                f"受信側が {dest.timeout_sec:g} 秒以内に受領を返しません（遅延）", retryable=True
            ) from exc
        except OSError as exc:
            raise DeliveryError(f"送信中に接続が切れました（{exc}）", retryable=True) from exc
        finally:
            raw.close()


# --- HTTP ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HttpAnswer:
    status: int
    body: bytes

    def text(self) -> str:
        return self.body.decode("utf-8", "replace")[:EXCERPT].replace("\n", " ")

    def json(self) -> Any:
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            return None


def _retryable_status(status: int) -> bool:
    return status in (408, 425, 429) or status >= 500


def _refusal(retryable: bool) -> str:
    return "一時的に受け付けません" if retryable else "記録を拒否しました"


class HttpSink:
    """POST a body; the status decides. Subclasses format batches and read answers."""

    content_type = "application/json"
    auth_scheme = "Bearer"

    def __init__(self, dest: ShipDestination) -> None:
        self.dest = dest
        handlers: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({})]
        if str(dest.url).startswith("https://"):
            handlers.append(urllib.request.HTTPSHandler(context=_ssl_context(dest)))
        self._opener = urllib.request.build_opener(*handlers)

    def _post(self, url: str, body: bytes, headers: dict[str, str]) -> HttpAnswer:
        request = urllib.request.Request(url, data=body, method="POST")
        request.add_header("Content-Type", self.content_type)
        if self.dest.token is not None:
            token = self.dest.token.get_secret_value()
            request.add_header("Authorization", f"{self.auth_scheme} {token}")
        for name, value in {**self.dest.headers, **headers}.items():
            request.add_header(name, value)
        try:
            with self._opener.open(request, timeout=self.dest.timeout_sec) as response:
                return HttpAnswer(response.status, response.read())
        except urllib.error.HTTPError as exc:
            return HttpAnswer(exc.code, exc.read() if exc.fp else b"")
        except TimeoutError as exc:
            raise DeliveryError(
                f"{self.dest.timeout_sec:g} 秒以内に応答がありません（遅延）", retryable=True
            ) from exc
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, ssl.SSLCertVerificationError):
                raise DeliveryError(
                    f"TLS 証明書を検証できません（{reason}）", retryable=False
                ) from exc
            raise DeliveryError(f"接続できません（{reason}）", retryable=True) from exc

    def _fail(
        self, answer: HttpAnswer, batch: list[Outgoing], at: int = 0, delivered: int | None = None
    ) -> DeliveryError:
        """The error for a refused batch: ``at`` is the record named, ``delivered`` (default
        ``at``) how many leading records count as accepted."""
        retryable = _retryable_status(answer.status)
        return DeliveryError(
            f"HTTP {answer.status}: {_refusal(retryable)}（{batch[at].where()}、応答: {answer.text()}）",
            retryable=retryable,
            delivered=at if delivered is None else delivered,
        )


class WebhookSink(HttpSink):
    def send(self, batch: list[Outgoing]) -> None:
        body = json.dumps({"records": [i.record for i in batch]}, ensure_ascii=False)
        key = hashlib.sha256("\n".join(i.hash for i in batch).encode()).hexdigest()
        answer = self._post(str(self.dest.url), body.encode(), {"Idempotency-Key": key})
        if not (200 <= answer.status < 300 or answer.status == 409):  # 409: already received
            raise self._fail(answer, batch)


class SplunkHecSink(HttpSink):
    auth_scheme = "Splunk"

    def send(self, batch: list[Outgoing]) -> None:
        events = []
        for item in batch:
            event: dict[str, Any] = {
                "source": self.dest.app_name,
                "sourcetype": self.dest.sourcetype,
                "fields": {"hash": item.hash, "file": item.file, "line": item.line},
                "event": item.record,
            }
            if self.dest.index:
                event["index"] = self.dest.index
            events.append(json.dumps(event, ensure_ascii=False, separators=(",", ":")))
        answer = self._post(str(self.dest.url), "\n".join(events).encode(), {})
        if 200 <= answer.status < 300:
            return
        data = answer.json()
        bad = data.get("invalid-event-number") if isinstance(data, dict) else None
        at = bad if isinstance(bad, int) and 0 <= bad < len(batch) else 0
        # Events before an invalid one may have been indexed: they are sent again (at least
        # once; ``dedup hash``), never skipped.
        raise self._fail(answer, batch, at, delivered=0)


class ElasticBulkSink(HttpSink):
    content_type = "application/x-ndjson"
    auth_scheme = "ApiKey"

    def send(self, batch: list[Outgoing]) -> None:
        lines = []
        for item in batch:
            action = {"create": {"_index": self.dest.index, "_id": item.hash}}
            lines += [json.dumps(action), _record_json(item.record)]
        url = str(self.dest.url).rstrip("/")
        url = url if url.endswith("/_bulk") else url + "/_bulk"
        answer = self._post(url, ("\n".join(lines) + "\n").encode(), {})
        if not 200 <= answer.status < 300:
            raise self._fail(answer, batch)
        data = answer.json()
        if not isinstance(data, dict) or not isinstance(data.get("items"), list):
            raise DeliveryError(f"_bulk の応答が読めません（{answer.text()}）", retryable=True)
        if not data.get("errors"):
            return
        for n, entry in enumerate(data["items"][: len(batch)]):
            result = entry.get("create", {}) if isinstance(entry, dict) else {}
            status = int(result.get("status", 0) or 0)
            if 200 <= status < 300 or status == 409:  # 409: this _id (hash) is stored already
                continue
            reason = json.dumps(result.get("error", ""), ensure_ascii=False)[:EXCERPT]
            raise DeliveryError(
                f"HTTP {status}: {_refusal(_retryable_status(status))}"
                f"（{batch[n].where()}、理由: {reason}）",
                retryable=_retryable_status(status),
                delivered=n,
            )


SINKS: dict[str, type] = {
    "syslog": SyslogSink,
    "splunk_hec": SplunkHecSink,
    "elastic_bulk": ElasticBulkSink,
    "webhook": WebhookSink,
}


def sink_for(dest: ShipDestination) -> Sink:
    return SINKS[dest.kind](dest)
