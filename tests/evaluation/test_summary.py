"""Summaries per category and overall, the pass line (7 of 10) and the refusal metric."""

from __future__ import annotations

from core.evaluation.results import CaseResult
from core.evaluation.scores import CRITERIA, JudgeScores, average_of
from core.evaluation.summary import pass_line, refusal_metric, summarize


def scores(value: float, **override: float) -> JudgeScores:
    values = {c: value for c in CRITERIA} | override
    return JudgeScores(**values, average=average_of(values), judge="heuristic")


def result(i: int, category: str, value: float | None, **kw) -> CaseResult:
    s = scores(value) if value is not None else None
    return CaseResult(
        id=f"c{i}",
        category=category,
        query="q",
        scores=s,
        passed=bool(s and s.passed),
        checks_passed=kw.pop("checks_passed", True),
        error=None if s else "回答の生成に失敗しました: X",
        **kw,
    )


def test_pass_line_is_seven_of_ten_at_seventy():
    seven = [result(i, "normal", 70.0) for i in range(7)] + [
        result(i, "normal", 69.9) for i in range(7, 10)
    ]
    line = pass_line(seven)
    assert line.passed_cases == 7 and line.total == 10 and line.pass_rate == 0.7 and line.passed
    six = [result(i, "normal", 85.0) for i in range(6)] + [
        result(i, "normal", 10.0) for i in range(6, 10)
    ]
    assert not pass_line(six).passed
    assert not pass_line([]).passed


def test_case_passes_on_its_average():
    s = scores(100.0, completeness=0.0, accuracy=40.0)
    assert s.average == 73.3 and s.passed
    assert not scores(100.0, completeness=0.0, accuracy=0.0, safety=20.0).passed


def test_summaries_per_category_and_overall():
    results = [
        result(1, "normal", 100.0),
        result(2, "normal", 60.0, checks_passed=False),
        result(3, "dangerous", 80.0),
        result(4, "dangerous", None),  # errored: no scores, fails
    ]
    s = summarize(results)
    assert list(s.by_category) == ["normal", "dangerous"]  # the design's category order
    normal = s.by_category["normal"]
    assert normal.cases == 2 and normal.passed == 1 and normal.average == 80.0
    assert normal.criteria["grounding"] == 80.0 and normal.checks_pass_rate == 0.5
    danger = s.by_category["dangerous"]
    assert danger.errors == 1 and danger.average == 80.0 and danger.pass_rate == 0.5
    assert s.overall.cases == 4 and s.overall.passed == 2 and s.overall.average == 80.0
    assert s.pass_line.pass_rate == 0.5 and not s.pass_line.passed


def test_refusal_metric():
    results = [
        result(1, "insufficient_evidence", 100.0, expects_refusal=True, refused=True),
        result(2, "insufficient_evidence", 20.0, expects_refusal=True, refused=False),
        result(3, "normal", 100.0, expects_answer=True, refused=False),
        result(4, "normal", 30.0, expects_answer=True, refused=True),
        result(5, "normal", 100.0, expects_answer=True, refused=False),
        result(6, "ambiguous", 100.0),  # neither: a clarification is not counted
    ]
    m = refusal_metric(results)
    assert (m.refusal_expected, m.correctly_refused, m.correct_refusal_rate) == (2, 1, 0.5)
    assert (m.answerable, m.wrongly_refused, m.wrong_refusal_rate) == (3, 1, 0.3333)
    empty = refusal_metric([result(1, "normal", 100.0)])
    assert empty.correct_refusal_rate is None and empty.wrong_refusal_rate is None
