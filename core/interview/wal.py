"""Write-ahead log of interview events (design appendix C / D).

One JSON line per event, ``{ts, event, data, user_id_hash, user, user_name, role, client}``
(who acted, in clear like the audit log's attribution), UTF-8, in
``logs/wal/YYYY-MM-DD.log``. User and session ids are hashed with a salt (``settings.wal_salt``
or a per-state ``state/wal.salt`` file); every string in ``data`` goes through
``core.masking.mask_value`` (e-mail, phone, address, credentials …).

Each committed turn writes a ``turn_committed`` event carrying a pseudonymous snapshot of the
session (ids replaced by their hashes, text masked). ``replay`` rebuilds sessions from those
snapshots: the newest snapshot of each session wins, so replaying the same WAL twice gives the
same state. A truncated last line (a crash mid-write) is skipped and reported, and the writer
starts a fresh line after it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from core.access import Principal
from core.interview.state import SessionState
from core.interview.store import SessionStore
from core.masking import mask_text
from core.private import open_private_append, private_dir
from core.settings import Settings

SNAPSHOT_EVENTS = {"session_started", "turn_committed", "session_stopped"}

_mask_cached = lru_cache(maxsize=8192)(mask_text)


def mask_value(value: Any) -> Any:
    """``core.masking.mask_value`` with the string masking memoized (snapshots repeat text)."""
    if isinstance(value, str):
        return _mask_cached(value) if len(value) < 4000 else mask_text(value)
    if isinstance(value, dict):
        return {k: mask_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_value(v) for v in value]
    return value


def wal_salt(settings: Settings) -> str:
    """The configured salt, else a random one kept in ``state/wal.salt`` (created once)."""
    if settings.wal_salt:
        return settings.wal_salt
    path = settings.interview_db.parent / "wal.salt"
    private_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text(encoding="utf-8").strip()
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        salt = secrets.token_hex(16)
        fh.write(salt)
    return salt


def hash_id(salt: str, value: str) -> str:
    return hashlib.sha256(f"{salt}:{value}".encode()).hexdigest()[:16]


def pseudonymize(state: SessionState, salt: str) -> dict[str, Any]:
    """The session as stored in the WAL: ids hashed, every string masked."""
    data = state.model_dump(mode="json")
    data["session_id"] = hash_id(salt, state.session_id)
    data["user_id"] = hash_id(salt, state.user_id)
    return mask_value(data)  # type: ignore[return-value]


def actor_fields(actor: Principal) -> dict[str, Any]:
    """Who acted, as the audit log records it: ``user``, ``user_name``, ``role``, ``client``."""
    return {
        "user": actor.subject,
        "user_name": actor.name,
        "role": actor.role,
        "client": actor.client,
    }


class WalWriter:
    """Appends records; ``durable=False`` skips the fsync (simulations in a temporary folder)."""

    def __init__(self, wal_dir: Path, salt: str, durable: bool = True) -> None:
        self.dir = Path(wal_dir)
        self.salt = salt
        self.durable = durable

    def hash(self, value: str) -> str:
        return hash_id(self.salt, value)

    def record(
        self,
        event: str,
        data: dict[str, Any],
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        ts: float | None = None,
        actor: Principal | None = None,
    ) -> dict[str, Any]:
        """One WAL record (masked, ids hashed), not yet written; ``actor``: who acted (the
        signed-in user's subject and display name, role and client address, issue 15)."""
        when = datetime.fromtimestamp(ts, UTC) if ts is not None else datetime.now(UTC)
        body = dict(mask_value(data))  # type: ignore[arg-type]
        if session_id is not None:
            body["session_hash"] = self.hash(session_id)
        return {
            "ts": when.isoformat(),
            "event": event,
            "data": body,
            "user_id_hash": self.hash(user_id) if user_id is not None else None,
            **(actor_fields(actor) if actor is not None else {}),
        }

    def write(self, event: str, data: dict[str, Any], **kwargs: Any) -> None:
        self.append([self.record(event, data, **kwargs)])

    def append(self, records: list[dict[str, Any]]) -> None:
        """Append records (one line each) with a single lock and fsync, to each day's file."""
        if not records:
            return
        private_dir(self.dir)
        by_path: dict[Path, list[str]] = {}
        for rec in records:
            day = str(rec["ts"])[:10]
            line = json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n"
            by_path.setdefault(self.dir / f"{day}.log", []).append(line)
        for path, lines in by_path.items():
            with open_private_append(path) as fh:
                fcntl.flock(fh, fcntl.LOCK_EX)
                try:
                    if fh.tell() > 0:
                        with path.open("rb") as check:
                            check.seek(-1, os.SEEK_END)
                            if check.read(1) != b"\n":
                                fh.write(b"\n")  # the previous writer died mid-line
                    fh.write("".join(lines).encode("utf-8"))
                    fh.flush()
                    if self.durable:
                        os.fsync(fh.fileno())
                finally:
                    fcntl.flock(fh, fcntl.LOCK_UN)


@dataclass(slots=True)
class WalRead:
    events: list[dict[str, Any]] = field(default_factory=list)
    bad_lines: list[int] = field(default_factory=list)  # 1-based line numbers skipped
    truncated_tail: bool = False


def read_wal(path: Path) -> WalRead:
    out = WalRead()
    try:
        raw = Path(path).read_bytes()
    except OSError:
        return out
    lines = raw.split(b"\n")
    ends_cleanly = raw.endswith(b"\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
            if not isinstance(record, dict) or "event" not in record:
                raise ValueError("not an event")
        except (ValueError, UnicodeDecodeError):
            out.bad_lines.append(number)
            if number == len(lines) and not ends_cleanly:
                out.truncated_tail = True
            continue
        record["_line"] = number
        record["_file"] = str(path)
        out.events.append(record)
    return out


def wal_files(wal_dir: Path, days: Iterable[str] | None = None) -> list[Path]:
    wal_dir = Path(wal_dir)
    if days is not None:
        return [wal_dir / f"{d}.log" for d in days if (wal_dir / f"{d}.log").exists()]
    return sorted(wal_dir.glob("*.log"))


def latest_snapshots(paths: Iterable[Path]) -> tuple[dict[str, dict[str, Any]], WalRead]:
    """session_hash -> its newest snapshot event, and the merged read report."""
    report = WalRead()
    best: dict[str, tuple[tuple[int, str, int], dict[str, Any]]] = {}
    for path in paths:
        read = read_wal(path)
        report.events.extend(read.events)
        report.bad_lines.extend(read.bad_lines)
        report.truncated_tail = report.truncated_tail or read.truncated_tail
        for ev in read.events:
            if ev.get("event") not in SNAPSHOT_EVENTS:
                continue
            data = ev.get("data") or {}
            snap = data.get("snapshot")
            key = data.get("session_hash")
            if not isinstance(snap, dict) or not key:
                continue
            order = (int(snap.get("turn", 0)), str(ev.get("ts", "")), ev["_line"])
            if key not in best or order >= best[key][0]:
                best[key] = (order, ev)
    return {k: v[1] for k, v in best.items()}, report


@dataclass(slots=True)
class ReplayReport:
    rebuilt: list[str] = field(default_factory=list)  # session ids written
    skipped: list[str] = field(default_factory=list)  # already as new or newer in the store
    events: int = 0
    bad_lines: int = 0
    truncated_tail: bool = False


def state_from_snapshot(snapshot: dict[str, Any], session_id: str, user_id: str) -> SessionState:
    data = dict(snapshot)
    data["session_id"] = session_id
    data["user_id"] = user_id
    return SessionState.model_validate(data)


def _is_newer_or_same(current: SessionState, snapshot: dict[str, Any]) -> bool:
    snap_turn = int(snapshot.get("turn", 0))
    snap_stopped = snapshot.get("status") == "stopped"
    if current.turn > snap_turn:
        return True
    return current.turn == snap_turn and (current.status == "stopped" or not snap_stopped)


def replay(paths: Iterable[Path], store: SessionStore, salt: str) -> ReplayReport:
    """Rebuild sessions from WAL snapshots into ``store`` (idempotent).

    A session still in the store keeps its id and user (matched by the salted hash) and is only
    overwritten when the WAL is newer or its row is corrupt (the raw row is quarantined first);
    a session missing from the store comes back as ``wal-<hash>`` with a pseudonymous user.
    """
    snaps, read = latest_snapshots(list(paths))
    report = ReplayReport(
        events=len(read.events), bad_lines=len(read.bad_lines), truncated_tail=read.truncated_tail
    )
    existing: dict[str, str] = {}
    for sid in store.session_ids():
        existing[hash_id(salt, sid)] = sid
        if sid.startswith("wal-"):
            existing.setdefault(sid[4:], sid)
    for key in sorted(snaps):
        snapshot = snaps[key]["data"]["snapshot"]
        sid = existing.get(key, f"wal-{key}")
        row = store.raw(sid)
        if row is not None:
            try:
                current = SessionState.model_validate_json(row["state_json"])
            except ValueError:
                store.quarantine(sid, row["state_json"])
            else:
                if _is_newer_or_same(current, snapshot):
                    report.skipped.append(sid)
                    continue
        user_id = row["user_id"] if row else f"wal-{snapshot.get('user_id', 'unknown')}"
        store.save(state_from_snapshot(snapshot, sid, user_id))
        report.rebuilt.append(sid)
    return report


def find_snapshot(paths: Iterable[Path], session_hash: str) -> dict[str, Any] | None:
    snaps, _ = latest_snapshots(list(paths))
    event = snaps.get(session_hash)
    return event["data"]["snapshot"] if event else None


RECOVERED_MESSAGE = (
    "保存データが壊れていたため、WAL から最後に記録されたターンまで復元しました"
    "（WAL の個人情報はマスクされています）。"
)


def recover_session(
    store: SessionStore, wal: WalWriter, paths: Iterable[Path], session_id: str
) -> SessionState | None:
    """Rebuild a session whose row is corrupt from its newest WAL snapshot (the raw row is
    quarantined first, so nothing stored is lost); ``None`` when the WAL has no snapshot."""
    row = store.raw(session_id) or {}
    snapshot = find_snapshot(paths, wal.hash(session_id))
    if snapshot is None:
        return None
    store.quarantine(session_id, row.get("state_json", ""))
    state = state_from_snapshot(snapshot, session_id, row.get("user_id", "local"))
    store.save(state)
    wal.write(
        "session_recovered", {"turn": state.turn}, user_id=state.user_id, session_id=session_id
    )
    return state
