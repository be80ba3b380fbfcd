"""Tamper-evident JSONL audit log: one record per question in ``logs/query_YYYY-MM-DD.jsonl``.

Every line is one ``AuditRecord`` (typed, with ``schema_version``): both RAG pipelines build it
with ``AuditRecord.from_answer`` and the dashboard and evaluation code read it back with
``AuditRecord.from_line``. Lines written before the typed record (no ``schema_version``) load as
version 1 with defaults for what they lack.

Every record carries ``key_id``, ``prev_hash`` and ``hash`` = HMAC-SHA256 (with the key
``key_id`` of the ring in ``core.audit_keys``, kept outside the log folder) of its canonical JSON
(keys sorted, without ``hash``). The chain runs across days: a day's first record links to the
previous day's last. A signed sidecar ``query_YYYY-MM-DD.jsonl.head`` holds each day's line count
and last hash, and the signed anchor beside the keys holds the chain's tip, so that removing the
last lines, a day, or a whole log with its head is evident. Without the key nobody can forge a
record, recompute the chain or rewrite a head. Appends take an exclusive ``flock`` beside the
keys, so concurrent sessions and processes write whole, correctly chained lines. Personal data
and secrets are masked (``core.masking``) before anything is written. ``verify_log`` checks it
all; records written before keys (no ``key_id``) are checked as the unkeyed chain they were.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.access import LOCAL, Principal
from core.audit_keys import (
    AuditKeyError,
    KeyRing,
    anchor_path,
    keys_dir_for,
    read_anchor,
    write_anchor,
    write_private,
)
from core.errors import WorkbenchError
from core.masking import mask_value
from core.private import private_dir
from core.schemas.answer import Answer
from core.settings import Settings

log = logging.getLogger(__name__)

GENESIS = "0" * 64
MASKED_FIELDS = ("query", "rewritten_query", "answer", "history", "search_results")
AUDIT_SCHEMA_VERSION = 2
# A longer question (refused by the pipelines) is logged truncated, with its length and sha256.
QUERY_LOG_CHARS = 1000


class AuditHit(BaseModel):
    """One retrieved passage of an answer, as the log keeps it (an excerpt, never the whole text)."""

    model_config = ConfigDict(extra="allow")

    n: int | None = None  # the answer's [n] marker
    chunk_id: str = ""
    file: str = ""  # the source as citations show it (file name, or jawiki:<title>)
    heading: str = ""
    ref: str | None = None  # e.g. jawiki:<title>#chunk=<n>
    score: float = 0.0
    bm25_score: float = 0.0
    vector_score: float = 0.0
    excerpt: str = ""
    doc_hash: str = ""
    cited: bool = True

    @model_validator(mode="before")
    @classmethod
    def _version1(cls, data: Any) -> Any:
        # Version-1 Wikipedia records named the passage ``source`` (<title>#chunk=<n>).
        if isinstance(data, dict) and "file" not in data and isinstance(data.get("source"), str):
            data = {**data, "file": data["source"].split("#", 1)[0], "ref": data["source"]}
        return data


class AuditRecord(BaseModel):
    """One question and its answer: the single record type of ``logs/query_*.jsonl``."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = 1  # lines from before the typed record carry none
    timestamp: str = ""
    page: str = "unknown"  # "runbook_chat" | "wiki_qa"
    session_id: str | None = None
    query: str = ""
    rewritten_query: str | None = None
    search_results: list[AuditHit] = Field(default_factory=list)
    answer: str = ""  # as the user saw it (the danger banner first)
    answer_mode: str = ""
    model: str | None = None
    processing_time_sec: float = 0.0
    token_usage: dict[str, int] = Field(default_factory=dict)
    cost_usd: float = 0.0
    search_config: dict[str, Any] = Field(default_factory=dict)
    flags: dict[str, bool] = Field(default_factory=dict)
    evidence: dict[str, float] = Field(default_factory=dict)
    dangerous_terms: list[str] = Field(default_factory=list)
    slow: bool = False
    warnings: list[str] = Field(default_factory=list)
    removed_refs: list[str] = Field(default_factory=list)
    # who asked (issue 15): the identity provider's subject and display name, the role and the
    # client address; ``local`` without sign-in (and on lines written before sign-in existed)
    user: str = "local"
    user_name: str = "local"
    role: str = "admin"
    client: str | None = None
    query_length: int | None = None  # set when ``query`` was truncated (QUERY_LOG_CHARS)
    query_sha256: str | None = None  # of the whole question, when truncated
    rotated_to: str | None = None  # a key-rotation record: the id of the key used from now on
    key_id: str | None = None  # the key that signed ``hash`` (none before keyed logs)
    prev_hash: str | None = None
    hash: str | None = None

    @classmethod
    def from_answer(
        cls, answer: Answer, session_id: str | None, principal: Principal = LOCAL
    ) -> AuditRecord:
        """The record of one answer of either pipeline, attributed to ``principal``."""
        return cls(
            schema_version=AUDIT_SCHEMA_VERSION,
            user=principal.subject,
            user_name=principal.name,
            role=principal.role,
            client=principal.client,
            page=answer.page or "unknown",
            session_id=session_id,
            query=answer.question,
            rewritten_query=answer.rewritten_query,
            search_results=[
                AuditHit(
                    n=c.n,
                    chunk_id=c.chunk_id,
                    file=c.file,
                    heading=c.heading,
                    ref=c.ref,
                    score=c.score,
                    bm25_score=c.bm25_score,
                    vector_score=c.vector_score,
                    excerpt=c.excerpt,
                    doc_hash=c.doc_hash,
                    cited=c.cited,
                )
                for c in answer.citations
            ],
            answer=answer.display_text(),
            answer_mode=answer.answer_mode,
            model=answer.model,
            processing_time_sec=answer.processing_time_sec,
            token_usage=answer.token_usage,
            cost_usd=answer.cost_usd,
            search_config=answer.retrieval,
            flags=answer.flags.model_dump(),
            evidence=answer.evidence,
            dangerous_terms=answer.dangerous_terms,
            slow=answer.slow,
            warnings=answer.warnings,
            removed_refs=answer.removed_refs,
        )

    @classmethod
    def from_line(cls, data: Any) -> AuditRecord | None:
        """A record read back from the log (any version), or ``None`` when it is not one."""
        if not isinstance(data, dict):
            return None
        try:
            return cls.model_validate(data)
        except ValidationError:
            return None

    def log_fields(self) -> dict[str, Any]:
        """The JSON object written to the log (before masking and chaining)."""
        return self.model_dump(mode="json", exclude={"key_id", "prev_hash", "hash"})


class AuditWriteError(WorkbenchError):
    """The audit record could not be written (the chat goes on with a warning)."""


LOG_PREFIX = "query_"


def log_path(logs_dir: Path, day: date) -> Path:
    return Path(logs_dir) / f"{LOG_PREFIX}{day.isoformat()}.jsonl"


KEYS_FILE = "audit-keys.json"
ROTATION_MODE = "key_rotation"


def _head_path(path: Path) -> Path:
    return path.with_name(path.name + ".head")


def default_keyring(logs_dir: Path, *, create: bool = True) -> KeyRing:
    """The ring beside the log folder (``keys/audit-keys.json``), created on first use."""
    return KeyRing.load(keys_dir_for(logs_dir) / KEYS_FILE, create=create)


def _canonical(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "hash"}
    return json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def record_hash(record: dict[str, Any], keys: KeyRing | None = None) -> str:
    """The record's hash: HMAC with its ``key_id`` when it has one, else plain sha256 (version 1)."""
    key_id = record.get("key_id")
    if key_id is None:
        return hashlib.sha256(_canonical(record).encode("utf-8")).hexdigest()
    if keys is None or key_id not in keys.keys:
        raise AuditKeyError(f"監査ログの鍵 {key_id} がありません。")
    return keys.mac(_canonical(record), key_id)


def _head_message(name: str, lines: int, last_hash: str) -> str:
    return f"head\n{name}\n{lines}\n{last_hash}"


@contextmanager
def _chain_lock(logs_dir: Path, keys_dir: Path) -> Iterator[None]:
    """One writer at a time for the whole chain (every day links to the one before)."""
    lock = anchor_path(keys_dir, logs_dir).with_suffix(".lock")
    private_dir(lock.parent)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _day_state(path: Path) -> tuple[int, str | None]:
    """(lines, last hash) of a day file, from its head or, when the head is unusable, the file."""
    head = _head_path(path)
    try:
        state = json.loads(head.read_text(encoding="utf-8"))
        return int(state["lines"]), str(state["hash"])
    except (OSError, ValueError, KeyError, TypeError):
        records, _ = read_records(path) if path.exists() else ([], 0)
        last = next((r["hash"] for r in reversed(records) if isinstance(r.get("hash"), str)), None)
        return len(records), last


def _truncate_query(record: dict[str, Any]) -> None:
    """Keep the head of an over-long question, its length and hash, never the whole text."""
    query = record.get("query")
    if isinstance(query, str) and len(query) > QUERY_LOG_CHARS:
        record["query_length"] = len(query)
        record["query_sha256"] = hashlib.sha256(query.encode("utf-8")).hexdigest()
        record["query"] = query[:QUERY_LOG_CHARS] + "…"


def append_record(
    logs_dir: Path,
    entry: AuditRecord | dict[str, Any],
    now: datetime | None = None,
    *,
    keys: KeyRing | None = None,
) -> dict:
    """Mask, sign, chain and append one record; returns the written record.

    A plain mapping is validated into an ``AuditRecord`` first, so every line has its shape.
    ``keys``: the ring to sign with (default: the one beside the log folder, created on first
    use). Raises AuditWriteError (Japanese) when the record cannot be written.
    """
    try:
        typed = entry if isinstance(entry, AuditRecord) else AuditRecord.model_validate(entry)
    except ValidationError as exc:
        raise AuditWriteError(
            "監査ログの記録の形式が不正です。管理者に連絡してください。", detail=str(exc)
        ) from exc
    if isinstance(entry, dict) and "schema_version" not in entry:
        typed.schema_version = AUDIT_SCHEMA_VERSION
    record = typed.log_fields()
    _truncate_query(record)
    for name in MASKED_FIELDS:
        if name in record:
            record[name] = mask_value(record[name])
    try:
        keys = keys or default_keyring(logs_dir)
        keys_dir = keys.path.parent if keys.path else keys_dir_for(logs_dir)
        anchor = anchor_path(keys_dir, logs_dir)
        private_dir(logs_dir)
        with _chain_lock(logs_dir, keys_dir):
            # The day and the time are taken under the lock: records are in time order across
            # processes, and no record of a day is appended after the next day has begun.
            now = now or datetime.now().astimezone()
            path = log_path(logs_dir, now.date())
            if not record.get("timestamp"):
                record["timestamp"] = now.isoformat(timespec="microseconds")
            lines, last = _day_state(path)
            if last is None:  # the day's first record links to the chain's tip
                tip = read_anchor(anchor, keys) or {}
                last = str(tip.get("hash") or GENESIS)
            record["key_id"] = keys.current
            record["prev_hash"] = last
            record["hash"] = keys.mac(_canonical(record))
            line = json.dumps(record, ensure_ascii=False) + "\n"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(fd, "ab") as fh:
                if fh.tell() > 0:
                    with path.open("rb") as check:
                        check.seek(-1, os.SEEK_END)
                        if check.read(1) != b"\n":
                            fh.write(b"\n")  # close a line left truncated by a crash
                fh.write(line.encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
            lines += 1
            head = {
                "lines": lines,
                "hash": record["hash"],
                "key_id": keys.current,
                "mac": keys.mac(_head_message(path.name, lines, record["hash"])),
            }
            write_private(_head_path(path), json.dumps(head))  # atomic: readers never see half
            write_anchor(anchor, keys, path.name, lines, record["hash"])
    except AuditKeyError as exc:
        log.warning("audit key unusable: %s", exc.user_message)
        raise AuditWriteError(
            f"監査ログを書き込めませんでした（{exc.user_message}）。回答は表示しますが、"
            "管理者に連絡してください。",
            detail=exc.detail,
        ) from exc
    except (OSError, ValueError, TypeError) as exc:
        log.warning("audit write failed: %s", exc)
        raise AuditWriteError(
            "監査ログを書き込めませんでした。回答は表示しますが、管理者に連絡してください。",
            detail=str(exc),
        ) from exc
    return record


def keyring_for(settings: Settings, *, create: bool = True) -> KeyRing:
    """The settings' key (``WB_AUDIT_KEY``), else the ring beside the log folder."""
    if settings.audit_key is not None:
        return KeyRing.from_hex(settings.audit_key.get_secret_value())
    return default_keyring(settings.logs_dir, create=create)


def record_answer(
    settings: Settings, answer: Answer, session_id: str | None, principal: Principal = LOCAL
) -> None:
    """Append the answer's record (who asked: ``principal``); a failure becomes a Japanese
    warning on the answer."""
    try:
        keys = keyring_for(settings)
        record = AuditRecord.from_answer(answer, session_id, principal)
        append_record(settings.logs_dir, record, keys=keys)
        answer.audit_logged = True
    except AuditKeyError as exc:
        answer.warnings.append(
            f"監査ログを書き込めませんでした（{exc.user_message}）。管理者に連絡してください。"
        )
    except AuditWriteError as exc:
        answer.warnings.append(exc.user_message)


def rotate_key(logs_dir: Path, keys: KeyRing | None = None) -> str:
    """Add a new current key and record the rotation in the chain (signed with the old key)."""
    keys = keys or default_keyring(logs_dir)
    rotated = keys.with_new_key()
    append_record(
        logs_dir,
        AuditRecord(
            schema_version=AUDIT_SCHEMA_VERSION,
            page="audit",
            answer_mode=ROTATION_MODE,
            query="鍵の交替",
            answer=f"監査ログの署名鍵を {keys.current} から {rotated.current} に交替しました。",
            rotated_to=rotated.current,
        ),
        keys=KeyRing(keys.current, rotated.keys, keys.path),
    )
    rotated.save()
    return rotated.current


def read_records(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Records of one file and the number of unreadable lines skipped (never fatal)."""
    records: list[dict[str, Any]] = []
    bad = 0
    try:
        with path.open("rb") as fh:
            for raw in fh:
                if not raw.strip():
                    continue
                try:
                    records.append(json.loads(raw.decode("utf-8")))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    bad += 1
    except OSError:
        return [], 0
    return records, bad
