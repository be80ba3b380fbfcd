"""Scripted users: a simulator that answers the interviewer from a written scenario.

A scenario (YAML, ``data/interview/scenarios/<domain>/*.yaml``) gives the topic and, per slot,
what the user says when asked about it (a list gives successive answers when the slot is asked
again). A bundled question gets the answers of its slots joined; a slot without an answer gets
``default_answer`` (「わからない」); a contradiction check gets ``clarify[slot]``. Time advances
by ``seconds_per_turn`` on a simulated clock, so runs are deterministic.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field, ValidationError

from core.errors import InputError
from core.interview.doc_quality import DocumentQuality, document_quality
from core.interview.kpi import SessionKPI, session_kpis
from core.interview.orchestrator import Interviewer, TurnResult
from core.settings import PROJECT_ROOT, Settings

SCENARIO_DIR = PROJECT_ROOT / "data" / "interview" / "scenarios"
START_EPOCH = 1_750_000_000.0


class Scenario(BaseModel):
    id: str
    domain: str
    title: str
    topic: str
    answers: dict[str, str | list[str]] = Field(default_factory=dict)
    clarify: dict[str, str] = Field(default_factory=dict)
    default_answer: str = "わからない"
    seconds_per_turn: float = 30.0
    abort_after: int | None = None  # say 「終了」 at this turn
    expect: dict[str, Any] = Field(default_factory=dict)
    path: str | None = None


class ScriptedUser:
    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.asked: dict[str, int] = {}

    def _answer(self, slot: str) -> str | None:
        given = self.scenario.answers.get(slot)
        if given is None:
            return None
        n = self.asked.get(slot, 0)
        self.asked[slot] = n + 1
        if isinstance(given, str):
            return given
        return given[min(n, len(given) - 1)] if given else None

    def reply(self, targets: list[str], clarify: bool = False, turn: int = 0) -> str:
        if self.scenario.abort_after is not None and turn >= self.scenario.abort_after:
            return "終了"
        if clarify and targets and targets[0] in self.scenario.clarify:
            return self.scenario.clarify[targets[0]]
        parts = [a for a in (self._answer(t) for t in targets) if a]
        return "。".join(p.rstrip("。") for p in parts) if parts else self.scenario.default_answer


class SimTurn(BaseModel):
    turn: int
    question: str
    targets: list[str]
    action: str
    voi: float
    reason: str
    answer: str
    targets_filled_before: list[str] = Field(default_factory=list)
    filled_ratios: dict[str, float] = Field(default_factory=dict)
    contradictions: list[str] = Field(default_factory=list)
    latency_ms: float = 0.0


class SimulationResult(BaseModel):
    scenario: str
    title: str
    domain: str
    turns: list[SimTurn]
    stop_reason: str | None
    stop_label: str | None
    missing: list[str]
    critical_filled: list[str]
    critical_total: int
    kpis: SessionKPI
    document: str | None
    start_latency_ms: float
    latencies_ms: list[float]
    quality: DocumentQuality = Field(default_factory=DocumentQuality)


def load_scenario(path: Path) -> list[Scenario]:
    """One scenario, or a list of them, from a YAML file."""
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        items = raw if isinstance(raw, list) else [raw]
        return [Scenario.model_validate({**item, "path": str(path)}) for item in items]
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"シナリオファイルを読めません: {path}", detail=str(exc)) from exc
    except (ValidationError, TypeError) as exc:
        raise InputError(
            f"シナリオファイルの形式が正しくありません: {path}", detail=str(exc)
        ) from exc


def load_scenarios(domain: str | None = None, folder: Path = SCENARIO_DIR) -> list[Scenario]:
    out: list[Scenario] = []
    for path in sorted(Path(folder).glob("*/*.yaml")):
        out.extend(s for s in load_scenario(path) if domain in (None, s.domain))
    return out


class _Clock:
    def __init__(self) -> None:
        self.now = START_EPOCH

    def __call__(self) -> float:
        return self.now


def run_scenario(
    scenario: Scenario,
    settings: Settings | None = None,
    *,
    interviewer_kwargs: dict[str, Any] | None = None,
    max_turns: int = 60,
) -> SimulationResult:
    """Play the scenario against a fresh interviewer (in a temporary state unless ``settings``)."""
    with tempfile.TemporaryDirectory(prefix="interview-sim-") as tmp:
        settings = settings or Settings(_env_file=None, state_dir=Path(tmp))
        clock = _Clock()
        kwargs = {"durable_wal": False, **(interviewer_kwargs or {})}
        iv = Interviewer(settings, clock=clock, **kwargs)
        user = ScriptedUser(scenario)
        result: TurnResult = iv.start(scenario.domain, scenario.topic, user_id=f"sim:{scenario.id}")
        start_ms = result.latency_ms
        turns: list[SimTurn] = []
        while not result.done and len(turns) < max_turns:
            state = result.session
            targets = list(state.pending_targets)
            before = [t for t in targets if state.slots[t].filled]
            clarify = state.pending_clarify is not None
            answer = user.reply(targets, clarify=clarify, turn=state.turn + 1)
            clock.now += scenario.seconds_per_turn
            decision = result.decision
            record = SimTurn(
                turn=state.turn,
                question=result.question or "",
                targets=targets,
                action="clarify" if clarify else (decision.action if decision else "ask"),
                voi=round(decision.voi, 4) if decision else 0.0,
                reason=decision.reason if decision else "",
                answer=answer,
                targets_filled_before=before,
            )
            result = iv.answer(state.session_id, answer)
            record.latency_ms = round(result.latency_ms, 2)
            record.filled_ratios = {n: s.filled_ratio for n, s in result.session.slots.items()}
            record.contradictions = [f"{c.slot_name}.{c.field}" for c in result.contradictions]
            turns.append(record)
        state = result.session
        spec_critical = [n for n, s in state.slots.items() if s.critical]
        quality = document_quality(state, iv.specs_for(state))
        iv.close()
        return SimulationResult(
            scenario=scenario.id,
            title=scenario.title,
            domain=scenario.domain,
            turns=turns,
            stop_reason=state.stop.reason if state.stop else None,
            stop_label=state.stop.label if state.stop else None,
            missing=state.stop.missing if state.stop else [],
            critical_filled=[n for n in spec_critical if state.slots[n].filled],
            critical_total=len(spec_critical),
            kpis=session_kpis(state),
            document=state.document,
            start_latency_ms=round(start_ms, 2),
            latencies_ms=[t.latency_ms for t in turns],
            quality=quality,
        )
