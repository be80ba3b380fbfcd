"""Question-set runs for the dashboard: the run files under ``settings.runs_dir``.

The files are read with the question-set package's own reader (``core.question_sets.runner``),
so their format has one owner. Unreadable files are reported, never fatal; when the package
cannot be imported the result says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import pandas as pd

from core.errors import WorkbenchError
from core.settings import Settings


@dataclass(slots=True)
class QuestionSetRuns:
    runs: pd.DataFrame  # one row per run
    records: pd.DataFrame  # one row per question of every run
    problems: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


def _day(text: str | None) -> str:
    return (text or "")[:10]


def load_question_set_runs(
    settings: Settings, start: date | None = None, end: date | None = None
) -> QuestionSetRuns:
    """Runs started within [start, end] (UTC date of ``started_at``), newest first."""
    try:
        from core.question_sets.runner import list_runs, read_run
    except ImportError as exc:
        return QuestionSetRuns(
            pd.DataFrame(),
            pd.DataFrame(),
            [f"質問セットの実行結果を読み込めません（{exc}）。"],
        )
    runs: list[dict] = []
    records: list[dict] = []
    problems: list[str] = []
    files = list_runs(settings)
    for path in files:
        try:
            run = read_run(path)
        except WorkbenchError as exc:
            problems.append(exc.user_message)
            continue
        day = _day(run.started_at)
        if (start and day < start.isoformat()) or (end and day > end.isoformat()):
            continue
        answered = len(run.records)
        insufficient = sum(1 for r in run.records if r.flags.get("insufficient_evidence"))
        runs.append(
            {
                "run_id": run.run_id,
                "status": run.status,
                "target": run.target,
                "target_label": run.target_label or run.target,
                "question_set_id": run.question_set_id,
                "ordinance_id": run.ordinance_id,
                "questions": run.question_count,
                "answered": answered,
                "errors": run.error_count,
                "insufficient_rate": round(insufficient / answered, 4) if answered else None,
                "mean_ms": round(run.total_ms / answered, 1) if answered else None,
                "total_sec": round(run.total_ms / 1000, 2),
                "started_at": run.started_at,
                "finished_at": run.finished_at,
                "user_name": run.user_name,
                "role": run.role,
                "file": path.name,
            }
        )
        for r in run.records:
            records.append(
                {
                    "run_id": run.run_id,
                    "index": r.index,
                    "question_id": r.question_id,
                    "question_text": r.question_text,
                    "answer": r.answer,
                    "answer_mode": r.answer_mode,
                    "citations": len(r.citations),
                    "insufficient_evidence": bool(r.flags.get("insufficient_evidence")),
                    "dangerous_operation": bool(r.flags.get("dangerous_operation")),
                    "elapsed_ms": r.elapsed_ms,
                    "error": r.error,
                }
            )
    return QuestionSetRuns(pd.DataFrame(runs), pd.DataFrame(records), problems, files)
