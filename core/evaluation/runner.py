"""Run the evaluation dataset through the runbook chat and judge every answer.

For each case: ``ask()`` with the case's conversation context as history (the runbook pipeline
exactly as the page calls it, without writing the operators' audit log), the deterministic
checks, then the judge (LLM or heuristic). The results file is rewritten after every case, so
``resume=True`` continues an interrupted run of the same dataset and judge. A case whose
pipeline fails is recorded with its Japanese error and the run goes on; an LLM judge that
fails on a case falls back to the heuristic judge for that case, with a warning.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from core.errors import InputError, WorkbenchError
from core.evaluation.checks import CheckResult, run_checks
from core.evaluation.dataset import EvalCase, Turn, load_dataset
from core.evaluation.heuristic_judge import INSUFFICIENT_PHRASES, heuristic_judge
from core.evaluation.llm_judge import JudgeError, llm_judge
from core.evaluation.results import (
    CaseResult,
    CheckRecord,
    CitationRecord,
    DatasetInfo,
    EvaluationRun,
    read_run,
    results_path,
    write_run,
)
from core.evaluation.scores import JUDGE_LABELS, JudgeKind, JudgeScores
from core.evaluation.summary import summarize
from core.pipelines import PIPELINES, Pipeline
from core.schemas.answer import Answer, Exchange
from core.settings import Settings

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]  # (done, total, case id)


@dataclass(frozen=True, slots=True)
class RunOutcome:
    path: Path
    run: EvaluationRun
    resumed: int = 0  # cases taken over from an interrupted run


def default_judge(settings: Settings) -> JudgeKind:
    """The LLM judge when a chat model is configured, else the heuristic judge."""
    return "llm" if settings.llm_enabled else "heuristic"


def history_of(context: Sequence[Turn] | None) -> list[Exchange]:
    """Exchanges from a ``conversation_context`` (user turns, each with the reply after it)."""
    out: list[Exchange] = []
    for turn in context or []:
        if turn.role == "user":
            out.append(Exchange(question=turn.content, answer="", search_query=turn.content))
        elif out and not out[-1].answer:
            out[-1].answer = turn.content
    return out


def is_refusal(answer: Answer) -> bool:
    text = answer.answer
    return answer.flags.insufficient_evidence or any(p in text for p in INSUFFICIENT_PHRASES)


def judge_answer(
    case: EvalCase,
    answer: Answer,
    checks: list[CheckResult] | None,
    judge: JudgeKind,
    settings: Settings,
) -> JudgeScores:
    """Score with the chosen judge; an LLM judge that fails falls back to the heuristic one."""
    if judge == "heuristic":
        return heuristic_judge(case, answer, checks)
    try:
        return llm_judge(
            settings, case.query, answer.display_text(), answer.citations, case.category
        )
    except JudgeError as exc:
        scores = heuristic_judge(case, answer, checks)
        scores.warnings.append(
            f"{exc.user_message} このケースはヒューリスティック判定で採点しました。"
        )
        return scores


def evaluate_case(
    case: EvalCase, pipeline: Pipeline, config: Any, settings: Settings, judge: JudgeKind
) -> CaseResult:
    """Ask, check and judge one case (never raises: an error is recorded on the result)."""
    base = {
        "id": case.id,
        "category": case.category,
        "query": case.query,
        "conversation_context": (
            [t.model_dump() for t in case.conversation_context]
            if case.conversation_context
            else None
        ),
        "expects_refusal": case.expects_refusal,
        "expects_answer": case.expects_answer,
    }
    try:
        answer = pipeline(case.query, history_of(case.conversation_context), config, settings)
    except Exception as exc:
        log.exception("evaluation case %s failed", case.id)
        message = exc.user_message if isinstance(exc, WorkbenchError) else type(exc).__name__
        return CaseResult(**base, error=f"回答の生成に失敗しました: {message}")
    checks = run_checks(case, answer)
    scores = judge_answer(case, answer, checks, judge, settings)
    return CaseResult(
        **base,
        answer=answer.display_text(),
        answer_mode=answer.answer_mode,
        flags=answer.flags.model_dump(),
        banner=answer.banner,
        citations=[
            CitationRecord(
                n=c.n,
                file=c.file,
                heading=c.heading,
                chunk_id=c.chunk_id,
                score=c.score,
                cited=c.cited,
                excerpt=c.excerpt,
            )
            for c in answer.citations
        ],
        checks=[CheckRecord(name=c.name, passed=c.passed, detail=c.detail) for c in checks],
        checks_passed=all(c.passed for c in checks),
        scores=scores,
        passed=scores.passed,
        refused=is_refusal(answer),
        processing_time_sec=answer.processing_time_sec,
        warnings=list(answer.warnings) + list(scores.warnings),
    )


def _now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def _resumable(path: Path, sha256: str, judge: JudgeKind) -> list[CaseResult]:
    if not path.exists():
        return []
    try:
        previous = read_run(path)
    except InputError:
        return []
    if previous.status != "running" or previous.dataset.sha256 != sha256 or previous.judge != judge:
        return []
    return [r for r in previous.results if not r.error]


def run_evaluation(
    settings: Settings,
    dataset_path: str | Path | None = None,
    judge: JudgeKind | None = None,
    *,
    target: str = "runbook",
    pipelines: Mapping[str, Pipeline] = PIPELINES,
    config: Any = None,
    judge_settings: Settings | None = None,
    case_ids: Sequence[str] | None = None,
    out: str | Path | None = None,
    resume: bool = False,
    progress: Progress | None = None,
) -> RunOutcome:
    """Run the dataset (default ``settings.eval_dataset``) and write the results file.

    ``judge_settings`` lets the judge use another chat model than the answers (default: the
    same settings). ``case_ids`` limits the run to some cases, in the dataset's order.
    ``target`` names the pipeline of ``pipelines`` that answers (the dataset's cases are
    runbook questions); ``config`` defaults to its own, without audit records.
    """
    pipeline = pipelines.get(target)
    if pipeline is None:
        raise InputError(f"評価の実行先「{target}」はありません（{', '.join(pipelines)}）。")
    judge = judge or default_judge(settings)
    judge_settings = judge_settings or settings
    if judge == "llm" and not judge_settings.llm_enabled:
        raise InputError(
            "LLM が設定されていないため LLM 判定は使えません。OPENAI_API_KEY または"
            " OPENAI_BASE_URL を設定するか、--judge heuristic を指定してください。"
        )
    source = Path(dataset_path or settings.eval_dataset)
    dataset, sha256 = load_dataset(source)
    cases = list(dataset.test_cases)
    if case_ids:
        wanted = set(case_ids)
        unknown = wanted - {c.id for c in cases}
        if unknown:
            raise InputError(f"データセットにないケース ID です: {', '.join(sorted(unknown))}")
        cases = [c for c in cases if c.id in wanted]
    config = config or pipeline.config_for("eval", write_audit=False)
    path = Path(out) if out else results_path(settings, datetime.now().astimezone().date())
    done = {r.id: r for r in _resumable(path, sha256, judge)} if resume else {}
    run = EvaluationRun(
        run_id=uuid.uuid4().hex[:12],
        status="running",
        created_at=_now(),
        dataset=DatasetInfo(
            path=str(source), version=dataset.version, sha256=sha256, cases=len(cases)
        ),
        judge=judge,
        judge_label=JUDGE_LABELS[judge],
        judge_model=judge_settings.chat_model if judge == "llm" else None,
        answer_mode=settings.answer_mode,
        settings={
            "target": target,
            **{
                k: v
                for k, v in asdict(config).items()
                if k not in ("session_id", "write_audit", "principal")
            },
            "embedder": settings.embedder,
            "chat_model": settings.chat_model if settings.llm_enabled else None,
            "runbooks_dir": str(getattr(config, "data", None) or settings.runbooks_dir),
        },
    )
    results: list[CaseResult] = []
    for i, case in enumerate(cases):
        if progress:
            progress(i, len(cases), case.id)
        result = done.get(case.id) or evaluate_case(case, pipeline, config, settings, judge)
        results.append(result)
        run.results = list(results)
        write_run(path, run)
    if progress:
        progress(len(cases), len(cases), "完了")
    run.summary = summarize(results)
    run.passed = run.summary.pass_line.passed
    run.status = "completed"
    run.finished_at = _now()
    write_run(path, run)
    return RunOutcome(path=path, run=run, resumed=len(done))
