"""The results file of an evaluation run: ``<eval_dir>/evaluation_results_YYYY-MM-DD.json``.

One JSON object: the run (dataset fingerprint, judge, answer mode, settings), one record per
case (answer, citations, flags, deterministic checks, the judge's scores, pass), and the
summary (per category and overall, pass line, refusal metric). It is rewritten atomically after
every case with ``status: running`` so that an interrupted run can be resumed, and a last time
with ``status: completed``. A later run on the same day replaces the file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import date
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.errors import InputError
from core.evaluation.dataset import CATEGORY_LABELS
from core.evaluation.scores import CRITERIA, CRITERION_LABELS, JudgeKind, JudgeScores
from core.settings import Settings

RESULTS_FORMAT = "evaluation_results.v1"
RESULTS_GLOB = "evaluation_results_*.json"
MAX_RESULTS_BYTES = 50 * 1024 * 1024


class CitationRecord(BaseModel):
    model_config = ConfigDict(extra="ignore")

    n: int
    file: str
    heading: str = ""
    chunk_id: str = ""
    score: float = 0.0
    cited: bool = True
    excerpt: str = ""


class CheckRecord(BaseModel):
    name: str
    passed: bool
    detail: str = ""


class CaseResult(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    category: str
    query: str
    conversation_context: list[dict[str, str]] | None = None
    answer: str = ""  # as displayed: the banner first when there is one
    answer_mode: str = ""
    flags: dict[str, bool] = Field(default_factory=dict)
    banner: str | None = None
    citations: list[CitationRecord] = Field(default_factory=list)
    checks: list[CheckRecord] = Field(default_factory=list)
    checks_passed: bool = False
    scores: JudgeScores | None = None
    passed: bool = False
    expects_refusal: bool = False
    expects_answer: bool = False
    refused: bool = False
    processing_time_sec: float = 0.0
    warnings: list[str] = Field(default_factory=list)
    error: str | None = None


class GroupSummary(BaseModel):
    cases: int
    passed: int
    pass_rate: float
    average: float | None  # mean of the case averages (cases with scores)
    criteria: dict[str, float] = Field(default_factory=dict)
    checks_pass_rate: float
    errors: int = 0


class PassLine(BaseModel):
    score: float
    required_rate: float
    passed_cases: int
    total: int
    pass_rate: float
    passed: bool


class RefusalMetric(BaseModel):
    refusal_expected: int
    correctly_refused: int
    correct_refusal_rate: float | None
    answerable: int
    wrongly_refused: int
    wrong_refusal_rate: float | None


class Summary(BaseModel):
    overall: GroupSummary
    by_category: dict[str, GroupSummary]
    pass_line: PassLine
    refusal: RefusalMetric


class DatasetInfo(BaseModel):
    path: str
    version: str
    sha256: str
    cases: int


class EvaluationRun(BaseModel):
    model_config = ConfigDict(extra="ignore")

    format: Literal["evaluation_results.v1"] = RESULTS_FORMAT
    run_id: str
    status: Literal["running", "completed"]
    created_at: str
    finished_at: str | None = None
    dataset: DatasetInfo
    judge: JudgeKind
    judge_label: str
    judge_model: str | None = None
    answer_mode: str
    settings: dict[str, Any] = Field(default_factory=dict)
    results: list[CaseResult] = Field(default_factory=list)
    summary: Summary | None = None
    passed: bool | None = None


def results_path(settings: Settings, day: date) -> Path:
    return settings.eval_dir / f"evaluation_results_{day.isoformat()}.json"


def write_run(path: Path, run: EvaluationRun) -> None:
    """Atomic rewrite (temporary file, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    data = json.dumps(run.model_dump(mode="json"), ensure_ascii=False, indent=2)
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(data + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)


def read_run(path: str | Path) -> EvaluationRun:
    """One results file; raises a Japanese InputError when it is unreadable or malformed."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_RESULTS_BYTES:
            raise InputError(f"評価結果「{p.name}」が大きすぎます。")
        data = json.loads(p.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise InputError(f"評価結果「{p.name}」を読み込めません。", detail=str(exc)) from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"評価結果「{p.name}」は JSON として読めません。") from exc
    try:
        return EvaluationRun.model_validate(data)
    except ValidationError as exc:
        raise InputError(
            f"評価結果「{p.name}」の形式が不正です（{len(exc.errors())} 件の不備）。",
            detail=str(exc.errors()[0]),
        ) from exc


def list_results(eval_dir: Path) -> list[Path]:
    """Results files, oldest first (their names sort by date)."""
    if not eval_dir.is_dir():
        return []
    return sorted(eval_dir.glob(RESULTS_GLOB))


def load_results(eval_dir: Path) -> tuple[list[tuple[Path, EvaluationRun]], list[str]]:
    """Every readable results file and a Japanese message per unreadable one (never raises)."""
    runs: list[tuple[Path, EvaluationRun]] = []
    problems: list[str] = []
    for path in list_results(eval_dir):
        try:
            runs.append((path, read_run(path)))
        except InputError as exc:
            problems.append(exc.user_message)
    return runs, problems


# --- tables for the dashboard -------------------------------------------------------------------


def runs_frame(runs: list[tuple[Path, EvaluationRun]]) -> pd.DataFrame:
    """One row per run: when, judge, pass line, average, refusal metric."""
    rows = []
    for path, run in runs:
        s = run.summary
        rows.append(
            {
                "created_at": run.created_at,
                "date": run.created_at[:10],
                "run_id": run.run_id,
                "status": run.status,
                "judge": run.judge,
                "judge_label": run.judge_label,
                "judge_model": run.judge_model,
                "answer_mode": run.answer_mode,
                "dataset_version": run.dataset.version,
                "cases": len(run.results),
                "passed_cases": s.pass_line.passed_cases if s else None,
                "pass_rate": s.pass_line.pass_rate if s else None,
                "passed": run.passed,
                "average": s.overall.average if s else None,
                "checks_pass_rate": s.overall.checks_pass_rate if s else None,
                "correct_refusal_rate": s.refusal.correct_refusal_rate if s else None,
                "wrong_refusal_rate": s.refusal.wrong_refusal_rate if s else None,
                "file": path.name,
            }
        )
    return pd.DataFrame(rows)


def scores_frame(runs: Iterable[EvaluationRun]) -> pd.DataFrame:
    """Judge scores in long form: run x category (and ``overall``) x criterion (and average)."""
    rows = []
    for run in runs:
        if run.summary is None:
            continue
        groups = [*run.summary.by_category.items(), ("overall", run.summary.overall)]
        for category, g in groups:
            values = dict(g.criteria)
            if g.average is not None:
                values["average"] = g.average
            for criterion, score in values.items():
                rows.append(
                    {
                        "created_at": run.created_at,
                        "run_id": run.run_id,
                        "judge": run.judge,
                        "category": category,
                        "category_label": "全体"
                        if category == "overall"
                        else CATEGORY_LABELS.get(category, category),
                        "criterion": criterion,
                        "criterion_label": "平均"
                        if criterion == "average"
                        else CRITERION_LABELS.get(criterion, criterion),
                        "score": score,
                    }
                )
    return pd.DataFrame(rows)


def cases_frame(run: EvaluationRun) -> pd.DataFrame:
    """One row per case of a run, with its scores and failed checks."""
    rows = []
    for r in run.results:
        row = {
            "id": r.id,
            "category": r.category,
            "category_label": CATEGORY_LABELS.get(r.category, r.category),
            "query": r.query,
            "passed": r.passed,
            "average": r.scores.average if r.scores else None,
            **{c: (getattr(r.scores, c) if r.scores else None) for c in CRITERIA},
            "checks_passed": r.checks_passed,
            "failed_checks": ", ".join(c.name for c in r.checks if not c.passed),
            "refused": r.refused,
            "answer_mode": r.answer_mode,
            "judge": r.scores.judge if r.scores else None,
            "processing_time_sec": r.processing_time_sec,
            "error": r.error,
        }
        rows.append(row)
    return pd.DataFrame(rows)
