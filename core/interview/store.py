"""SQLite persistence of interview sessions (``settings.interview_db``), saved after every turn.

Tables:
- ``sessions``: one row per session; the listing columns (user, domain, topic, status, turn …)
  beside the full ``state_json`` so that a corrupt JSON still lists and can be recovered;
- ``corrupt_sessions``: a corrupt row's raw text is copied here before a recovery overwrites it
  (nothing stored is lost);
- ``kg_outbox``: knowledge-graph batches written in the same transaction as the session and
  deleted once the graph backend took them (a graph failure is retried on the next turn).

Every call opens its own connection (the page runs in several threads).

At rest the answers are encrypted, not masked (``core.sealing``, AES-256-GCM): ``state_json``,
``topic``, ``kg_outbox.batch_json`` and ``corrupt_sessions.raw`` hold sealed text, because the
document the interview writes needs what the user said verbatim. The WAL, which is for replay
and audit, is masked instead. The file is created 0600 (``core.private``).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.errors import InputError, WorkbenchError
from core.interview.state import SessionState
from core.private import private_file
from core.sealing import Sealer, SealError

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    domain TEXT NOT NULL,
    topic TEXT NOT NULL,
    status TEXT NOT NULL,
    stop_reason TEXT,
    turn INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    version INTEGER NOT NULL,
    state_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_user ON sessions(user_id, updated_at);
CREATE TABLE IF NOT EXISTS corrupt_sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    saved_at REAL NOT NULL,
    raw TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS kg_outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    batch_json TEXT NOT NULL
);
"""


class SessionNotFoundError(InputError):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"セッションが見つかりません: {session_id}")
        self.session_id = session_id


class CorruptSessionError(WorkbenchError):
    """A stored row cannot be read; its raw text stays in the store."""

    def __init__(self, session_id: str, detail: str) -> None:
        super().__init__(
            f"セッション {session_id} の保存データが壊れています。WAL からの復元を試みてください。",
            detail=detail,
        )
        self.session_id = session_id


class ConcurrentUpdateError(InputError):
    def __init__(self, session_id: str) -> None:
        super().__init__(
            "このセッションは別の画面で更新されました。再読み込みしてから回答してください。"
        )
        self.session_id = session_id


@dataclass(frozen=True, slots=True)
class SessionSummary:
    session_id: str
    user_id: str
    domain: str
    topic: str
    status: str
    stop_reason: str | None
    turn: int
    created_at: str
    updated_at: str
    corrupt: bool = False


class ThreadConnections:
    """One autocommit SQLite connection per thread, kept open (opening and closing a
    WAL-mode database on every call costs more than a whole turn)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._local = threading.local()

    def get(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            private_file(self.path)  # 0600: SQLite gives -wal / -shm the same mode
            conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA secure_delete=ON")  # overwritten rows leave no plain text
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def open_session_store(settings: Any, path: Path | None = None) -> SessionStore:
    """The store of ``settings`` (``interview_db`` unless ``path``), sealed with
    ``WB_STORE_KEY`` or the state folder's key file."""
    db = Path(path or settings.interview_db)
    key = settings.store_key.get_secret_value() if settings.store_key is not None else None
    return SessionStore(db, Sealer.for_store(db, key))


class SessionStore:
    def __init__(self, path: Path, sealer: Sealer | None = None) -> None:
        self.path = Path(path)
        self.sealer = sealer or Sealer.for_store(self.path)
        self._conns = ThreadConnections(self.path)
        with self._connect() as conn:
            conn.executescript(SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = self._conns.get()
        conn.row_factory = None
        yield conn

    def close(self) -> None:
        self._conns.close()

    def _seal(self, text: str, column: str) -> str:
        return self.sealer.seal(text, column)

    def _open(self, value: str, column: str) -> str:
        """The plain text; a value that does not open is returned sealed (reads as corrupt)."""
        try:
            return self.sealer.open(value, column)
        except SealError:
            return value

    # --- sessions --------------------------------------------------------------------
    def save(
        self,
        state: SessionState,
        outbox: list[dict[str, Any]] | None = None,
        *,
        expected_version: int | None = None,
    ) -> int:
        """Write the session (and its graph batches) in one transaction; returns the version."""
        payload = state.model_dump_json()
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute(
                    "SELECT version FROM sessions WHERE session_id = ?", (state.session_id,)
                ).fetchone()
                current = row[0] if row else 0
                if expected_version is not None and row and current != expected_version:
                    raise ConcurrentUpdateError(state.session_id)
                version = current + 1
                conn.execute(
                    "INSERT INTO sessions (session_id, user_id, domain, topic, status, stop_reason,"
                    " turn, created_at, updated_at, version, state_json)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT(session_id) DO UPDATE SET user_id=excluded.user_id,"
                    " domain=excluded.domain, topic=excluded.topic, status=excluded.status,"
                    " stop_reason=excluded.stop_reason, turn=excluded.turn,"
                    " updated_at=excluded.updated_at, version=excluded.version,"
                    " state_json=excluded.state_json",
                    (
                        state.session_id,
                        state.user_id,
                        state.goal_kind,
                        self._seal(state.topic, "topic"),
                        state.status,
                        state.stop.reason if state.stop else None,
                        state.turn,
                        state.created_at,
                        state.updated_at or state.created_at,
                        version,
                        self._seal(payload, "state_json"),
                    ),
                )
                for batch in outbox or []:
                    conn.execute(
                        "INSERT INTO kg_outbox (created_at, batch_json) VALUES (?, ?)",
                        (
                            time.time(),
                            self._seal(json.dumps(batch, ensure_ascii=False), "batch_json"),
                        ),
                    )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        state.version = version
        return version

    def raw(self, session_id: str) -> dict[str, Any] | None:
        with self._connect() as conn:
            conn.row_factory = sqlite3.Row
            row = conn.execute(
                "SELECT * FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
        if row is None:
            return None
        data = dict(row)
        data["topic"] = self._open(data["topic"], "topic")
        data["state_json"] = self._open(data["state_json"], "state_json")
        return data

    def load(self, session_id: str) -> SessionState:
        row = self.raw(session_id)
        if row is None:
            raise SessionNotFoundError(session_id)
        try:
            state = SessionState.model_validate_json(row["state_json"])
        except (ValidationError, ValueError) as exc:
            raise CorruptSessionError(session_id, str(exc)[:300]) from exc
        state.version = row["version"]
        return state

    def exists(self, session_id: str) -> bool:
        with self._connect() as conn:
            return bool(
                conn.execute(
                    "SELECT 1 FROM sessions WHERE session_id = ?", (session_id,)
                ).fetchone()
            )

    def list(
        self, user_id: str | None = None, status: str | None = None, limit: int = 200
    ) -> list[SessionSummary]:
        sql = "SELECT session_id, user_id, domain, topic, status, stop_reason, turn, created_at,"
        sql += " updated_at, state_json FROM sessions"
        where, args = [], []
        if user_id is not None:
            where.append("user_id = ?")
            args.append(user_id)
        if status is not None:
            where.append("status = ?")
            args.append(status)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY updated_at DESC LIMIT ?"
        args.append(limit)
        with self._connect() as conn:
            rows = conn.execute(sql, args).fetchall()
        out = []
        for row in rows:
            corrupt = False
            try:
                json.loads(self.sealer.open(row[9], "state_json"))
            except (ValueError, SealError):
                corrupt = True
            topic = self._open(row[3], "topic")
            out.append(SessionSummary(*row[:3], topic, *row[4:9], corrupt=corrupt))
        return out

    def quarantine(self, session_id: str, raw: str) -> None:
        with self._connect() as conn:
            conn.execute(
                "INSERT INTO corrupt_sessions (session_id, saved_at, raw) VALUES (?, ?, ?)",
                (session_id, time.time(), self._seal(raw, "raw")),
            )

    def quarantined(self, session_id: str) -> list[str]:
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT raw FROM corrupt_sessions WHERE session_id = ? ORDER BY id", (session_id,)
            ).fetchall()
        return [self._open(r[0], "raw") for r in rows]

    def session_ids(self) -> list[str]:
        with self._connect() as conn:
            return [r[0] for r in conn.execute("SELECT session_id FROM sessions")]

    # --- knowledge-graph outbox --------------------------------------------------------
    def outbox(self, limit: int = 200) -> list[tuple[int, dict[str, Any]]]:
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT seq, batch_json FROM kg_outbox ORDER BY seq LIMIT ?", (limit,)
            ).fetchall()
        return [(seq, json.loads(self._open(raw, "batch_json"))) for seq, raw in rows]

    def outbox_done(self, seqs: list[int]) -> None:
        if not seqs:
            return
        with self._connect() as conn:
            conn.executemany("DELETE FROM kg_outbox WHERE seq = ?", [(s,) for s in seqs])

    def outbox_failed(self, seqs: list[int], error: str) -> None:
        with self._connect() as conn:
            conn.executemany(
                "UPDATE kg_outbox SET attempts = attempts + 1, last_error = ? WHERE seq = ?",
                [(error[:500], s) for s in seqs],
            )

    def outbox_size(self) -> int:
        with self._connect() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM kg_outbox").fetchone()[0])
