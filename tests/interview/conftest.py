"""Fixtures for the interview tests: an interviewer on a fresh state folder and a test clock."""

from __future__ import annotations

import pytest

from core.interview.domains import get_domain
from core.interview.orchestrator import Interviewer
from core.interview.simulator import START_EPOCH, load_scenarios
from core.interview.slots import slot_from_spec
from core.interview.state import Hypothesis, SessionState


class Clock:
    """A clock the test moves forward (staleness and WAL days stay deterministic)."""

    def __init__(self, now: float = START_EPOCH) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def tick(self, seconds: float = 30.0) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def iv(settings, clock):
    interviewer = Interviewer(settings, clock=clock)
    yield interviewer
    interviewer.close()


@pytest.fixture(scope="session")
def scenarios():
    return load_scenarios()


def scenario(scenarios, scenario_id: str):
    return next(s for s in scenarios if s.id == scenario_id)


APPENDIX_G = {
    "summary": "昨日14:30頃、決済APIでタイムアウトが発生し、約2時間決済できなくなった",
    "impact": "アクティブユーザー約12万、決済リクエストの35%が失敗しました",
    "detection": "PagerDutyのアラートで5分後に検知しました",
    "timeline": "14:30 失敗率上昇検知→14:40 ロールバック試行→15:05 可用性回復",
    "root_cause": "新しいタイムアウト設定値の不整合が原因の可能性が高いです",
    "capa": "設定値の再検証と自動テスト追加（SRE担当、2週間、失敗率<1%）",
}


def reply_for(result, answers: dict[str, str], default: str = "わからない") -> str:
    targets = result.session.pending_targets
    parts = [answers[t] for t in targets if t in answers]
    return "。".join(parts) if parts else default


@pytest.fixture
def make_settings_factory(tmp_path):
    """Settings on one state folder with extra options (e.g. a Neo4j URI)."""
    from tests.conftest import make_settings

    def factory(**extra):
        return make_settings(tmp_path / "state", tmp_path / "runbooks", **extra)

    return factory


def make_state(domain: str = "postmortem") -> tuple[SessionState, dict]:
    spec = get_domain(domain)
    state = SessionState(
        session_id="s1",
        user_id="u",
        topic="t",
        goal_kind=spec.name,
        slots={s.name: slot_from_spec(s) for s in spec.slots},
        hypothesis=Hypothesis(id="h", text="t"),
        created_at="2025-01-01T00:00:00+00:00",
    )
    return state, {s.name: s for s in spec.slots}
