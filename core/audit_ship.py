"""Shipping the audit log to SIEM destinations: at least once, in order, never in the answer path.

Each destination (``settings.audit_ship_destinations``) has a persisted offset in the state
folder (``state/audit-ship/<name>.json``: day file, byte position and line of the next record,
hash of the last delivered one; written atomically, 0600). ``ship_destination`` reads whole
lines from that offset on (a line still being written is left for later), sends them in
batches (``core.audit_sinks``) and moves the offset only past records the destination
accepted. A destination that is down or slow is retried with exponential backoff
(``audit_ship_backoff_sec`` doubling up to ``audit_ship_backoff_max_sec``,
``audit_ship_retries`` times); one that refuses a record (HTTP 4xx) is not retried in this
round. Either way the run ends with a Japanese message naming the destination and the first
undelivered record, which is sent again on the next run: no record is lost, and a record
sent twice carries the same ``hash`` to deduplicate on. A line that is not JSON is reported
with its file and line and passed (it is not a record; ``audit verify`` names it too).

``python -m core audit ship`` runs one pass (or ``--follow``); with ``WB_AUDIT_SHIP_BACKGROUND``
the app starts one daemon thread per process (``start_background_shipper``) that ships every
``audit_ship_interval_sec`` seconds, beside the chat, never inside it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from core.audit import LOG_PREFIX
from core.audit_keys import write_private
from core.audit_sinks import DeliveryError, Outgoing, Sink, sink_for
from core.errors import InputError
from core.schemas.shipping import ShipDestination
from core.settings import Settings

log = logging.getLogger(__name__)


def ship_dir(settings: Settings) -> Path:
    return settings.state_root / "state" / "audit-ship"


@dataclass(slots=True)
class Offset:
    """Where the next record to send starts: ``byte`` in ``file`` (after ``line`` lines)."""

    file: str = ""
    byte: int = 0
    line: int = 0
    hash: str | None = None  # the last delivered record's hash

    @classmethod
    def load(cls, path: Path) -> Offset:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(str(data["file"]), int(data["byte"]), int(data["line"]), data.get("hash"))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(
                f"送信位置のファイル「{path}」が読めません。内容を確認するか、削除して最初から"
                "送り直してください（重複は hash で除けます）。",
                detail=str(exc),
            ) from exc

    def save(self, path: Path, dest: ShipDestination) -> None:
        data = {
            "destination": dest.name,
            "kind": dest.kind,
            "file": self.file,
            "byte": self.byte,
            "line": self.line,
            "hash": self.hash,
            "updated_at": datetime.now(tz=UTC).isoformat(timespec="seconds"),
        }
        write_private(path, json.dumps(data, ensure_ascii=False))


@dataclass(frozen=True, slots=True)
class Item:
    """A complete line of the log: a record to send, or a line that is not one (``bad``)."""

    out: Outgoing
    start: int  # byte offset of the line's start
    bad: bool = False


def read_pending(logs_dir: Path, offset: Offset, limit: int) -> tuple[list[Item], list[str]]:
    """Up to ``limit`` records (and any bad lines among them) from ``offset`` on, in log order,
    and Japanese warnings (bad lines, a file shorter than the offset)."""
    items: list[Item] = []
    warnings: list[str] = []
    files = sorted(Path(logs_dir).glob(f"{LOG_PREFIX}*.jsonl"))
    if offset.file and offset.byte and not (Path(logs_dir) / offset.file).exists():
        warnings.append(
            f"送信済みの {offset.file} がありません（ローカルでの削除の可能性。"
            "audit verify --against で確認してください）。"
        )
    for path in files:
        if path.name < offset.file:
            continue
        start, line = (offset.byte, offset.line) if path.name == offset.file else (0, 0)
        try:
            size = path.stat().st_size
            if size < start:
                warnings.append(
                    f"{path.name} が送信済みの位置（{start} バイト）より短くなっています"
                    "（ローカルの改ざん・切り詰めの可能性。audit verify --against で確認してください）。"
                )
                continue
            with path.open("rb") as fh:
                fh.seek(start)
                for raw in iter(fh.readline, b""):
                    if not raw.endswith(b"\n"):
                        return items, warnings  # being written: the next run sends it
                    line += 1
                    end = start + len(raw)
                    items.append(_item(path.name, line, start, end, raw, warnings))
                    start = end
                    if sum(not i.bad for i in items) >= limit:
                        return items, warnings
        except OSError as exc:
            warnings.append(f"{path.name} を読めません（{exc}）。次回もう一度読みます。")
            return items, warnings
    return items, warnings


def _item(name: str, line: int, start: int, end: int, raw: bytes, warnings: list[str]) -> Item:
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        record = None
    if not isinstance(record, dict):
        if raw.strip():
            warnings.append(
                f"{name} {line} 行目は JSON の記録として読めないため送信しません"
                "（audit verify で確認してください）。"
            )
        return Item(Outgoing(name, line, end, {}), start, bad=True)
    if not record.get("hash"):  # records of the oldest logs: a content hash as their key
        record = {**record, "hash": hashlib.sha256(raw.strip()).hexdigest()}
    return Item(Outgoing(name, line, end, record), start)


@dataclass(slots=True)
class DestinationReport:
    dest: ShipDestination
    sent: int = 0
    retries: int = 0
    pending: int = 0  # records left after this run
    error: str | None = None  # Japanese, names the destination and the first unsent record
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    def summary_ja(self) -> str:
        text = f"送信先{self.dest.label()}: {self.sent} 件送信"
        if self.retries:
            text += f"（再試行 {self.retries} 回）"
        text += f"、未送信 {self.pending} 件。"
        return text + (f" {self.error}" if self.error else "")


@contextmanager
def _exclusive(path: Path) -> Iterator[bool]:
    """One shipper per destination across processes; False when another one runs now."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _advance(items: list[Item], goods: list[Item], delivered: int, offset: Offset) -> Offset:
    """The offset after ``delivered`` leading records of ``goods`` (and bad lines before the
    next one) were accepted: just before the first undelivered record, or past all ``items``."""
    last = goods[delivered - 1].out.hash if delivered else offset.hash
    if delivered < len(goods):
        nxt = goods[delivered]
        return Offset(nxt.out.file, nxt.start, nxt.out.line - 1, last)
    tail = items[-1].out
    return Offset(tail.file, tail.end, tail.line, last)


def count_pending(logs_dir: Path, offset: Offset) -> int:
    count = 0
    while True:
        items, _ = read_pending(logs_dir, offset, 10_000)
        if not items:
            return count
        count += sum(not i.bad for i in items)
        tail = items[-1].out
        offset = Offset(tail.file, tail.end, tail.line)


def ship_destination(
    settings: Settings,
    dest: ShipDestination,
    *,
    sink: Sink | None = None,
    sleep: Callable[[float], object] | None = None,
    stop: threading.Event | None = None,
) -> DestinationReport:
    """Send every record after the destination's offset (see the module docstring)."""
    report = DestinationReport(dest)
    stop = stop or threading.Event()
    wait = sleep or stop.wait
    offset_file = ship_dir(settings) / f"{dest.name}.json"
    with _exclusive(offset_file.with_suffix(".lock")) as mine:
        if not mine:
            report.error = "別の送信処理が実行中のため今回は見送りました。"
            return report
        offset = Offset.load(offset_file)
        sink = sink or sink_for(dest)
        attempt = 0
        seen: set[str] = set()
        while not stop.is_set():
            items, warnings = read_pending(settings.logs_dir, offset, dest.batch_size)
            for text in warnings:
                if text not in seen:
                    seen.add(text)
                    report.warnings.append(text)
                    log.warning("送信先%s: %s", dest.label(), text)
            if not items:
                break
            goods = [i for i in items if not i.bad]
            error: DeliveryError | None = None
            delivered = len(goods)
            if goods:
                try:
                    sink.send([i.out for i in goods])
                except DeliveryError as exc:
                    error, delivered = exc, max(0, min(exc.delivered, len(goods)))
            if error is None or delivered:
                offset = _advance(items, goods, delivered, offset)
                offset.save(offset_file, dest)
                report.sent += delivered
                attempt = 0 if delivered else attempt
            if error is None:
                continue
            if not error.retryable or attempt >= settings.audit_ship_retries:
                report.error = (
                    f"送信先{dest.label()}に送れませんでした: {error.user_message}。"
                    f"{goods[delivered].out.where()}以降は未送信のまま残し、次回送り直します。"
                )
                log.warning("%s", report.error)
                break
            delay = min(
                settings.audit_ship_backoff_sec * 2**attempt, settings.audit_ship_backoff_max_sec
            )
            attempt += 1
            report.retries += 1
            log.info("audit ship %s: retry %d in %.1fs (%s)", dest.name, attempt, delay, error)
            wait(delay)
        report.pending = count_pending(settings.logs_dir, offset)
    return report


def ship_all(
    settings: Settings,
    names: list[str] | None = None,
    *,
    stop: threading.Event | None = None,
) -> list[DestinationReport]:
    """One pass over the configured destinations (or those named); InputError for an unknown one."""
    dests = settings.audit_ship_destinations
    if names:
        known = {d.name for d in dests}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise InputError(
                f"送信先 {', '.join(unknown)} は設定（WB_AUDIT_SHIP_DESTINATIONS）にありません。"
            )
        dests = [d for d in dests if d.name in names]
    return [ship_destination(settings, d, stop=stop) for d in dests]


class BackgroundShipper:
    """A daemon thread shipping every ``interval`` seconds until ``stop()``."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._stop = threading.Event()
        self.last: list[DestinationReport] = []
        self.thread = threading.Thread(target=self._run, name="audit-shipper", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.last = ship_all(self.settings, stop=self._stop)
            except Exception:  # a shipper that dies would silently stop shipping
                log.exception("audit shipping pass failed")
            self._stop.wait(self.settings.audit_ship_interval_sec)

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self.thread.join(timeout)


_shippers: dict[str, BackgroundShipper] = {}
_shippers_lock = threading.Lock()


def start_background_shipper(settings: Settings) -> BackgroundShipper | None:
    """The process' shipper of ``settings.logs_dir``, started on first call when the settings
    enable it (``audit_ship_background`` and at least one destination); else None."""
    if not settings.audit_ship_background or not settings.audit_ship_destinations:
        return None
    key = str(settings.logs_dir.resolve())
    with _shippers_lock:
        shipper = _shippers.get(key)
        if shipper is None or not shipper.thread.is_alive():
            shipper = BackgroundShipper(settings)
            shipper.thread.start()
            _shippers[key] = shipper
        return shipper
