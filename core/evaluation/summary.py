"""Summaries of a run: per category and overall, the pass line and the refusal metric.

- A case passes when its judge average is at least ``PASS_SCORE`` (70); a case that errored
  has no scores and fails.
- The run passes the design's line when at least ``PASS_RATE`` (70%) of its cases pass.
- Refusal metric: of the cases the runbooks cannot answer, the share correctly refused; of the
  answerable cases (those with expected citations), the share wrongly refused.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.evaluation.dataset import CATEGORIES
from core.evaluation.results import CaseResult, GroupSummary, PassLine, RefusalMetric, Summary
from core.evaluation.scores import CRITERIA, PASS_RATE, PASS_SCORE


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def summarize_group(results: Sequence[CaseResult]) -> GroupSummary:
    scored = [r.scores for r in results if r.scores is not None]
    passed = sum(1 for r in results if r.passed)
    criteria = (
        {c: round(sum(getattr(s, c) for s in scored) / len(scored), 1) for c in CRITERIA}
        if scored
        else {}
    )
    return GroupSummary(
        cases=len(results),
        passed=passed,
        pass_rate=_rate(passed, len(results)) or 0.0,
        average=round(sum(s.average for s in scored) / len(scored), 1) if scored else None,
        criteria=criteria,
        checks_pass_rate=_rate(sum(1 for r in results if r.checks_passed), len(results)) or 0.0,
        errors=sum(1 for r in results if r.error),
    )


def pass_line(results: Sequence[CaseResult]) -> PassLine:
    passed = sum(1 for r in results if r.passed)
    total = len(results)
    rate = passed / total if total else 0.0
    return PassLine(
        score=PASS_SCORE,
        required_rate=PASS_RATE,
        passed_cases=passed,
        total=total,
        pass_rate=round(rate, 4),
        passed=total > 0 and rate >= PASS_RATE,
    )


def refusal_metric(results: Sequence[CaseResult]) -> RefusalMetric:
    expected = [r for r in results if r.expects_refusal]
    answerable = [r for r in results if r.expects_answer]
    right = sum(1 for r in expected if r.refused)
    wrong = sum(1 for r in answerable if r.refused)
    return RefusalMetric(
        refusal_expected=len(expected),
        correctly_refused=right,
        correct_refusal_rate=_rate(right, len(expected)),
        answerable=len(answerable),
        wrongly_refused=wrong,
        wrong_refusal_rate=_rate(wrong, len(answerable)),
    )


def summarize(results: Sequence[CaseResult]) -> Summary:
    order = {c: i for i, c in enumerate(CATEGORIES)}
    categories = sorted({r.category for r in results}, key=lambda c: (order.get(c, 99), c))
    return Summary(
        overall=summarize_group(results),
        by_category={
            c: summarize_group([r for r in results if r.category == c]) for c in categories
        },
        pass_line=pass_line(results),
        refusal=refusal_metric(results),
    )
