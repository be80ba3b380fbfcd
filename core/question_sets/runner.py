"""Run a question set against a target and keep every answer in a run file.

A run file (``<runs_dir>/run-<UTC time to the microsecond>-<target>-<id>.json``) holds one record per question, in
the set's execution order, with the set's ids, the question id and text, the answer, its
citations and flags, the answer mode, timing and any error. It is rewritten atomically after
each question (status ``running``), so an interrupted run leaves a readable file that
``run_question_set(..., resume=path)`` continues; the last write sets ``completed``.

A question whose target raises is recorded with its Japanese error and the run goes on; a target
that cannot start at all fails before the first question.

``execution_sha256`` fingerprints what is executed (schema version, ordinance id, pool, question
ids and texts), not the human label ``question_set_id`` nor the non-contract ``metadata``: two
files differing only in those run and compare the same.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.access import LOCAL, Principal
from core.errors import ContractError, InputError, WorkbenchError
from core.masking import mask_text, mask_value
from core.private import private_dir
from core.question_sets.contract import (
    QuestionSet,
    canonical_bytes,
    parse_json_bytes,
    read_bytes,
    summarize,
    write_atomic,
)
from core.question_sets.targets import TARGET_LABELS, Target, jsonable
from core.schemas.messages import japanese_errors
from core.settings import Settings

RUN_FORMAT = "question_set_run.v1"
MAX_RUN_BYTES = 50 * 1024 * 1024

Progress = Callable[[int, int, str], None]  # (done, total, question_id)


class RunRecord(BaseModel):
    model_config = ConfigDict(extra="ignore")

    index: int = Field(ge=0)
    question_id: str
    question_text: str
    ordinance_id: str
    question_set_id: str
    source_golden_question_pool: str
    answer: str
    answer_mode: str = ""
    citations: list[dict[str, Any]] = Field(default_factory=list)
    flags: dict[str, bool] = Field(default_factory=dict)
    started_at: str
    elapsed_ms: float
    error: str | None = None


class RunFile(BaseModel):
    model_config = ConfigDict(extra="ignore")

    run_format: Literal["question_set_run.v1"] = RUN_FORMAT
    run_id: str
    status: Literal["running", "completed", "interrupted"]
    target: str
    target_label: str = ""
    schema_version: str
    ordinance_id: str
    question_set_id: str
    source_golden_question_pool: str
    execution_sha256: str
    question_count: int
    started_at: str
    finished_at: str | None = None
    # who ran it (issue 15): subject and display name, role, client address; ``local`` without
    # sign-in and in files written before
    user: str = "local"
    user_name: str = "local"
    role: str = "admin"
    client: str | None = None
    records: list[RunRecord] = Field(default_factory=list)

    @property
    def error_count(self) -> int:
        return sum(1 for r in self.records if r.error)

    @property
    def total_ms(self) -> float:
        return sum(r.elapsed_ms for r in self.records)


@dataclass(frozen=True, slots=True)
class RunResult:
    path: Path
    run: RunFile


def execution_sha256(qs: QuestionSet) -> str:
    """A fingerprint of what runs: excludes ``question_set_id`` and ``metadata`` on purpose."""
    executed = {
        "schema_version": qs.schema_version,
        "ordinance_id": qs.ordinance_id,
        "source_golden_question_pool": qs.source_golden_question_pool,
        "questions": [[q.question_id, q.question_text] for q in qs.questions],
    }
    return hashlib.sha256(canonical_bytes(executed)).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _run_bytes(run: RunFile) -> bytes:
    return canonical_bytes(run.model_dump(mode="json"))


def _run_issues(exc: ValidationError) -> list[tuple[str, str]]:
    return japanese_errors(exc, camel=False)


def parse_run(data: Any) -> RunFile:
    try:
        return RunFile.model_validate(data)
    except ValidationError as exc:
        issues = _run_issues(exc)
        raise ContractError(summarize(issues, "実行結果ファイル"), issues) from exc


def read_run(path: str | Path) -> RunFile:
    """Read a run file; a missing, unreadable or malformed file raises a Japanese error."""
    raw = read_bytes(path, max_bytes=MAX_RUN_BYTES)
    try:
        data = parse_json_bytes(raw, max_bytes=MAX_RUN_BYTES)
    except ContractError as exc:
        message = f"実行結果ファイル {Path(path).name}: {exc.user_message}"
        raise ContractError(message, exc.errors) from None
    return parse_run(data)


def list_runs(settings: Settings) -> list[Path]:
    """Run files under ``settings.runs_dir``, newest first."""
    folder = settings.runs_dir
    if not folder.is_dir():
        return []
    return sorted(folder.glob("run-*.json"), key=lambda p: p.name, reverse=True)


def _new_run(qs: QuestionSet, target: Target, principal: Principal) -> RunFile:
    return RunFile(
        user=principal.subject,
        user_name=principal.name,
        role=principal.role,
        client=principal.client,
        run_id=uuid.uuid4().hex[:12],
        status="running",
        target=target.name,
        target_label=TARGET_LABELS.get(target.name, target.name),
        schema_version=qs.schema_version,
        ordinance_id=qs.ordinance_id,
        question_set_id=qs.question_set_id,
        source_golden_question_pool=qs.source_golden_question_pool,
        execution_sha256=execution_sha256(qs),
        question_count=len(qs.questions),
        started_at=_now(),
    )


def _resume(path: Path, qs: QuestionSet, target: Target) -> RunFile:
    run = read_run(path)
    if run.execution_sha256 != execution_sha256(qs):
        raise InputError("再開しようとした実行結果は、別の内容の質問セットのものです。")
    if run.target != target.name:
        raise InputError(
            f"再開しようとした実行結果の実行先（{run.target}）が指定（{target.name}）と異なります。"
        )
    return run.model_copy(update={"status": "running", "finished_at": None})


def run_question_set(
    qs: QuestionSet,
    target: Target,
    settings: Settings,
    *,
    progress: Progress | None = None,
    resume: str | Path | None = None,
    out: str | Path | None = None,
    principal: Principal = LOCAL,
) -> RunResult:
    """Ask every question of ``qs`` in order; write and return the run file (run by
    ``principal``: build the target with the same one, so its audit records name them too)."""
    if resume is not None:
        path = Path(resume)
        run = _resume(path, qs, target)
    else:
        run = _new_run(qs, target, principal)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")  # microseconds: runs sort by time
        if out is None:
            private_dir(settings.runs_dir)
        path = (
            Path(out) if out else settings.runs_dir / f"run-{stamp}-{target.name}-{run.run_id}.json"
        )
    done = {r.question_id for r in run.records}
    records = list(run.records)
    total = len(qs.questions)
    if progress:
        progress(len(done), total, "")
    write_atomic(path, _run_bytes(run))
    try:
        for index, question in enumerate(qs.questions):
            if question.question_id in done:
                continue
            records.append(
                _ask_one(qs, target, index, question.question_id, question.question_text)
            )
            records.sort(key=lambda r: r.index)
            run = run.model_copy(update={"records": list(records)})
            write_atomic(path, _run_bytes(run))
            if progress:
                progress(len(records), total, question.question_id)
    except KeyboardInterrupt:
        run = run.model_copy(update={"status": "interrupted", "finished_at": _now()})
        write_atomic(path, _run_bytes(run))
        raise
    run = run.model_copy(update={"status": "completed", "finished_at": _now()})
    write_atomic(path, _run_bytes(run))
    return RunResult(path, run)


def _ask_one(qs: QuestionSet, target: Target, index: int, qid: str, text: str) -> RunRecord:
    started = _now()
    t0 = time.perf_counter()
    error: str | None = None
    try:
        answer = target.ask(text)
    except WorkbenchError as exc:
        answer, error = None, exc.user_message
    except Exception as exc:  # one failing question must not lose the run
        answer, error = None, f"予期しないエラー: {type(exc).__name__}: {exc}"
    elapsed = (time.perf_counter() - t0) * 1000
    # A run file is a sink like the audit log: questions, answers and excerpts are masked.
    return RunRecord(
        index=index,
        question_id=qid,
        question_text=mask_text(text),
        ordinance_id=qs.ordinance_id,
        question_set_id=qs.question_set_id,
        source_golden_question_pool=qs.source_golden_question_pool,
        answer=mask_text(str(answer.answer)) if answer else "",
        answer_mode=str(answer.answer_mode) if answer else "",
        citations=[mask_value(jsonable(c)) for c in answer.citations] if answer else [],
        flags={str(k): bool(v) for k, v in answer.flags.items()} if answer else {},
        started_at=started,
        elapsed_ms=round(elapsed, 3),
        error=mask_text(error) if error else None,
    )


__all__ = [
    "RUN_FORMAT",
    "Progress",
    "RunFile",
    "RunRecord",
    "RunResult",
    "execution_sha256",
    "list_runs",
    "parse_run",
    "read_run",
    "run_question_set",
]
