"""Tamper-evident JSONL audit log: one record per question in ``logs/query_YYYY-MM-DD.jsonl``.

Every line is one ``AuditRecord`` (typed, with ``schema_version``): both RAG pipelines build it
with ``AuditRecord.from_answer`` and the dashboard and evaluation code read it back with
``AuditRecord.from_line``. Lines written before the typed record (no ``schema_version``) load as
version 1 with defaults for what they lack.

Every record carries ``prev_hash`` and ``hash`` = sha256 of its canonical JSON (keys sorted,
without ``hash``), chained within the day's file from ``GENESIS``. A sidecar
``query_YYYY-MM-DD.jsonl.head`` holds the line count and last hash, so that removing or truncating
the last lines is detected too. Appends take an exclusive ``flock`` on the sidecar, so concurrent
sessions and processes write whole, correctly chained lines. Personal data and secrets are
masked (``core.masking``) before anything is written.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.errors import WorkbenchError
from core.masking import mask_value
from core.schemas.answer import Answer

log = logging.getLogger(__name__)

GENESIS = "0" * 64
MASKED_FIELDS = ("query", "rewritten_query", "answer", "history", "search_results")
AUDIT_SCHEMA_VERSION = 2


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
    prev_hash: str | None = None
    hash: str | None = None

    @classmethod
    def from_answer(cls, answer: Answer, session_id: str | None) -> AuditRecord:
        """The record of one answer of either pipeline."""
        return cls(
            schema_version=AUDIT_SCHEMA_VERSION,
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
        return self.model_dump(mode="json", exclude={"prev_hash", "hash"})


class AuditWriteError(WorkbenchError):
    """The audit record could not be written (the chat goes on with a warning)."""


def log_path(logs_dir: Path, day: date) -> Path:
    return logs_dir / f"query_{day.isoformat()}.jsonl"


def _head_path(path: Path) -> Path:
    return path.with_name(path.name + ".head")


def record_hash(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "hash"}
    canonical = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@contextmanager
def _locked_head(path: Path) -> Iterator[Any]:
    head = _head_path(path)
    head.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(head, os.O_RDWR | os.O_CREAT, 0o640)
    with os.fdopen(fd, "r+", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield fh
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _state_from_file(path: Path) -> dict[str, Any]:
    """Rebuild the head from the log itself (a missing sidecar must not restart the chain)."""
    records, _ = read_records(path) if path.exists() else ([], 0)
    last = next((r["hash"] for r in reversed(records) if isinstance(r.get("hash"), str)), GENESIS)
    return {"lines": len(records), "hash": last}


def append_record(
    logs_dir: Path, entry: AuditRecord | dict[str, Any], now: datetime | None = None
) -> dict:
    """Mask, chain and append one record; returns the written record. Raises AuditWriteError.

    A plain mapping is validated into an ``AuditRecord`` first, so every line has its shape.
    """
    now = now or datetime.now().astimezone()
    path = log_path(logs_dir, now.date())
    try:
        typed = entry if isinstance(entry, AuditRecord) else AuditRecord.model_validate(entry)
    except ValidationError as exc:
        raise AuditWriteError(
            "監査ログの記録の形式が不正です。管理者に連絡してください。", detail=str(exc)
        ) from exc
    if isinstance(entry, dict) and "schema_version" not in entry:
        typed.schema_version = AUDIT_SCHEMA_VERSION
    record = typed.log_fields()
    if not record.get("timestamp"):
        record["timestamp"] = now.isoformat(timespec="microseconds")
    for name in MASKED_FIELDS:
        if name in record:
            record[name] = mask_value(record[name])
    try:
        with _locked_head(path) as head:
            head.seek(0)
            raw = head.read().strip()
            state = json.loads(raw) if raw else _state_from_file(path)
            record["prev_hash"] = state["hash"]
            record["hash"] = record_hash(record)
            line = json.dumps(record, ensure_ascii=False) + "\n"
            with path.open("ab") as fh:
                if fh.tell() > 0:
                    with path.open("rb") as check:
                        check.seek(-1, os.SEEK_END)
                        if check.read(1) != b"\n":
                            fh.write(b"\n")  # close a line left truncated by a crash
                fh.write(line.encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
            head.seek(0)
            head.truncate()
            head.write(json.dumps({"lines": state["lines"] + 1, "hash": record["hash"]}))
            head.flush()
            os.fsync(head.fileno())
    except (OSError, ValueError, TypeError) as exc:
        log.warning("audit write failed: %s", exc)
        raise AuditWriteError(
            "監査ログを書き込めませんでした。回答は表示しますが、管理者に連絡してください。",
            detail=str(exc),
        ) from exc
    return record


@dataclass(frozen=True, slots=True)
class VerifyReport:
    path: str
    lines: int
    ok: bool
    first_bad_line: int | None = None  # 1-based
    reason: str | None = None

    def message_ja(self) -> str:
        if self.ok:
            return f"{self.path}: {self.lines} 行、ハッシュチェーンは正常です。"
        return f"{self.path}: {self.first_bad_line} 行目で改ざん・欠落を検出しました（{self.reason}）。"


def verify_file(path: Path) -> VerifyReport:
    """Check every line's hash and chain, and the head sidecar (removal/truncation at the end)."""
    if not path.exists():
        return VerifyReport(str(path), 0, False, 1, "ログファイルがありません")
    prev = GENESIS
    count = 0
    with path.open("rb") as fh:
        data = fh.read()
    lines = data.split(b"\n")
    trailing_ok = data.endswith(b"\n") or not data
    if lines and lines[-1] == b"":
        lines = lines[:-1]
    for number, raw in enumerate(lines, start=1):
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            reason = (
                "行が途中で切れています"
                if number == len(lines) and not trailing_ok
                else "JSON として読めません"
            )
            return VerifyReport(str(path), count, False, number, reason)
        if record.get("prev_hash") != prev:
            return VerifyReport(
                str(path),
                count,
                False,
                number,
                "前の行とのチェーンが一致しません（行の削除・挿入）",
            )
        if record.get("hash") != record_hash(record):
            return VerifyReport(
                str(path), count, False, number, "内容がハッシュと一致しません（行の編集）"
            )
        prev = record["hash"]
        count += 1
    head = _head_path(path)
    if head.exists():
        try:
            state = json.loads(head.read_text(encoding="utf-8") or "{}")
        except json.JSONDecodeError:
            state = {}
        if state and (state.get("lines") != count or state.get("hash") != prev):
            return VerifyReport(
                str(path), count, False, count + 1, "末尾の行が削除されたか、切り詰められています"
            )
    return VerifyReport(str(path), count, True)


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
