"""One turn's steps (design 3.2 / 3.5), on a ``TurnContext``:

observe (extract the answer, Stage02; merge facts, Stage03; settle a pending contradiction;
count unanswered targets; infer derivable slots; update the online estimates of design
10.7 / 10.8) -> advance (hard stop / turn budget; the policy decides; search while searching
is worth more than asking; soft stop; ask through ``asking.QuestionAsker``) -> finish (stop
reason, document).

Every step appends its WAL records and knowledge-graph batches to the context; the
orchestrator writes them when it commits the turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from core.access import LOCAL, Principal
from core.interview import adaptation as adapt
from core.interview.answers import AnswerKind, classify_answer
from core.interview.artifacts import render_markdown
from core.interview.asking import QuestionAsker, ack_values
from core.interview.domains import DomainSpec, SlotSpec
from core.interview.evidence import EvidenceSource, run_search
from core.interview.extraction import Extraction, extract_answer
from core.interview.fill import (
    FillReport,
    apply_candidates,
    infer_candidates,
    mark_unanswered,
    settle_contradiction,
)
from core.interview.kg import build_batch, llm_batch
from core.interview.params import VoIParams
from core.interview.policy import PolicyContext, PolicyProvider, decide_safely
from core.interview.qgen import preface
from core.interview.state import Contradiction, Decision, SessionState, StopInfo, VoITrace
from core.interview.stop import budget_stop, hard_stop, soft_stop
from core.interview.wal import WalWriter

LONG_ANSWER = "回答が長いため、先頭4000文字から項目を読み取りました（全文は保存済み）。"


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()


@dataclass(slots=True)
class TurnContext:
    state: SessionState
    domain: DomainSpec
    specs: dict[str, SlotSpec]
    now: float
    wal: WalWriter
    records: list[dict[str, Any]] = field(default_factory=list)
    outbox: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    report: FillReport = field(default_factory=FillReport)
    resolved: list[Contradiction] = field(default_factory=list)
    actor: Principal = LOCAL  # who acts in this turn (the WAL records it)

    def event(self, event: str, data: dict[str, Any]) -> None:
        self.records.append(
            self.wal.record(
                event,
                data,
                user_id=self.state.user_id,
                session_id=self.state.session_id,
                ts=self.now,
                actor=self.actor,
            )
        )

    @property
    def today(self) -> date:
        return datetime.fromtimestamp(self.now).date()


def session_specs(state: SessionState, domain: DomainSpec) -> dict[str, SlotSpec]:
    """The domain's slots plus the ones proposed for this session (Stage04)."""
    specs = {s.name: s for s in domain.slots}
    for s in state.extra_slots:
        specs.setdefault(s.name, s)
    return specs


class TurnLoop:
    def __init__(
        self,
        policy: PolicyProvider,
        params: VoIParams,
        evidence: EvidenceSource | None = None,
        llm: Any = None,
    ) -> None:
        self.policy, self.params, self.evidence, self.llm = policy, params, evidence, llm
        self.asker = QuestionAsker(params, llm)

    # --- observe ---------------------------------------------------------------------------
    def extract(self, ctx: TurnContext, text: str, targets: list[str]) -> Extraction:
        filled = {n for n, s in ctx.state.slots.items() if s.filled}
        if self.llm is not None and classify_answer(text) == AnswerKind.CONTENT:
            result = self.llm.extract(text, ctx.state, ctx.specs, targets, ctx.today)
            if result is not None:
                return result
            ctx.warnings.append("LLM による抽出に失敗したため、ルールベースの抽出を使いました。")
            ctx.event("llm_fallback", {"stage": "extract"})
        return extract_answer(text, ctx.specs, targets, filled=filled, today=ctx.today)

    def observe(self, ctx: TurnContext, text: str, targets: list[str]) -> bool:
        """Merge the answer into the session; True when it told us nothing new."""
        state = ctx.state
        extraction = self.extract(ctx, text, targets)
        clarify = state.pending_clarify
        settling = {c.slot_name for c in state.contradictions if c.id == clarify}
        ctx.report = apply_candidates(
            state,
            ctx.specs,
            extraction.candidates,
            turn=state.turn,
            now=ctx.now,
            correction=extraction.correction,
            settling=settling,
        )
        if clarify:
            c = settle_contradiction(state, ctx.specs, clarify, text, extraction, ctx.now)
            if c:
                ctx.resolved.append(c)
                ctx.event("contradiction_resolved", c.model_dump())
        filled_now = {c.slot for c in extraction.candidates if c.normalized_match > 0}
        unanswered = sorted(set(extraction.unanswered) | (set(targets) - filled_now))
        mark_unanswered(state, unanswered)
        inferred = infer_candidates(state, ctx.specs)
        if inferred:
            more = apply_candidates(state, ctx.specs, inferred, turn=state.turn, now=ctx.now)
            ctx.report.new_facts += more.new_facts
            ctx.report.updated += more.updated
        for c in ctx.report.contradictions:
            ctx.event("contradiction", c.model_dump())
        adapted = self.adapt_online(ctx, text, targets, clarify is not None)
        ctx.event(
            "fill",
            {
                "turn": state.turn,
                "method": extraction.method,
                "kind": extraction.kind,
                "unanswered": unanswered,
                "truncated": extraction.truncated,
                "updated": {n: state.slots[n].filled_ratio for n in ctx.report.updated},
                **adapted,
            },
        )
        if extraction.truncated:
            ctx.warnings.append(LONG_ANSWER)
        self.graph_batch(ctx, ctx.report, extraction)
        return bool(unanswered) and not ctx.report.new_facts

    def adapt_online(
        self, ctx: TurnContext, text: str, targets: list[str], clarify: bool
    ) -> dict[str, Any]:
        """Online estimates (design 10.7 / 10.8): the answer's outcome and response time (turn
        clock minus the question's time, both in the WAL), then the importance update."""
        state = ctx.state
        asked = state.questions[-1] if state.questions else None
        response = ctx.now - asked.ts if asked is not None and targets else None
        out: dict[str, Any] = {}
        if targets and not clarify:
            got = {f.slot_name for f in ctx.report.new_facts}
            kind = classify_answer(text)
            told_nothing = kind in (AnswerKind.EMPTY, AnswerKind.UNKNOWN) or not (
                got & set(targets)
            )
            adapt.record_answer(state.adaptation, told_nothing, response)
            out["answer_unanswered"] = told_nothing
        out["response_s"] = round(response, 3) if response is not None else None
        moved = adapt.update_importance(state, self.params)
        out["importance"] = {n: state.slots[n].importance for n in moved}
        return out

    @staticmethod
    def graph_batch(
        ctx: TurnContext, report: FillReport, extraction: Extraction | None = None
    ) -> None:
        if report.new_facts:
            ctx.outbox.append(
                build_batch(ctx.state, report.new_facts, ctx.specs, ctx.now).model_dump()
            )
        if extraction is not None and extraction.kg_entities:
            batch = llm_batch(ctx.state, extraction.kg_entities, extraction.kg_relations, ctx.now)
            ctx.outbox.append(batch.model_dump())

    # --- decide and act --------------------------------------------------------------------
    def decide(self, ctx: TurnContext, search: bool = True) -> Decision:
        state = ctx.state
        pctx = PolicyContext(
            state, ctx.specs, self.params, ctx.now, search=search and self.evidence is not None
        )
        decision, warning = decide_safely(self.policy, pctx)
        considered = [n for a in decision.candidates for n in a.slots]
        decision.adapted = adapt.adapted_values(
            state, ctx.specs, self.params, decision.slots + considered, search=pctx.search
        )
        if warning:
            ctx.warnings.append(warning)
            ctx.event("policy_fallback", {"warning": warning})
        state.voi_trace.append(
            VoITrace(
                turn=state.turn,
                action=decision.action,
                slots=decision.slots,
                voi=decision.voi,
                median_voi=decision.median_voi,
                max_voi=decision.max_voi,
            )
        )
        ctx.event("decision", decision.model_dump(exclude={"candidates"}))
        return decision

    def advance(self, ctx: TurnContext, first: bool = False, unanswered: bool = False) -> None:
        state, params = ctx.state, self.params
        required = ctx.domain.stop_requires
        stop = hard_stop(state, params, ctx.now, required) or budget_stop(
            state, ctx.domain.turn_budget, ctx.now
        )
        if stop:
            self.finish(ctx, stop)
            return
        searches = 0
        while True:
            decision = self.decide(ctx, search=searches < params.max_searches_per_turn)
            stop = soft_stop(state, decision, params, ctx.now)
            if stop:
                self.finish(ctx, stop)
                return
            if decision.action != "search":
                break
            self.search(ctx, decision)
            searches += 1
            stop = hard_stop(state, params, ctx.now, required)
            if stop:
                self.finish(ctx, stop)
                return
        acks = [] if first else ack_values(ctx.report.new_facts, ctx.specs)
        ack = preface(acks, first=first, unanswered=unanswered, answered=bool(ctx.report.new_facts))
        if not self.asker.ask(state, ctx.specs, decision, ack, ctx.now, ctx.event):
            self.finish(ctx, soft_stop(state, Decision(action="none"), params, ctx.now))  # type: ignore[arg-type]

    def search(self, ctx: TurnContext, decision: Decision) -> None:
        state = ctx.state
        name = decision.slots[0]
        slot = state.slots[name]
        assert self.evidence is not None
        found = run_search(self.evidence, ctx.specs[name], state.topic, page=slot.search_attempts)
        slot.search_attempts += 1
        if found.warning:
            ctx.warnings.append(found.warning)
        latency = None if found.warning else found.latency_s
        qpp = adapt.record_search(state.adaptation, name, found.scores, latency)
        candidates = found.candidates
        report = apply_candidates(state, ctx.specs, candidates, turn=state.turn, now=ctx.now)
        ctx.report.new_facts += report.new_facts
        ctx.event(
            "search",
            {
                "slot": name,
                "hits": len(candidates),
                "filled_ratio": state.slots[name].filled_ratio,
                "sources": [c.provenance for c in candidates],
                "page": found.page,
                "scores": found.scores,
                "qpp": qpp,
                "latency_ms": round(latency * 1000.0, 3) if latency is not None else None,
                "cost_search": round(adapt.cost_search(state, self.params), 4),
            },
        )
        self.graph_batch(ctx, report)

    @staticmethod
    def finish(ctx: TurnContext, stop: StopInfo) -> None:
        state = ctx.state
        state.status = "stopped"
        state.stop = stop
        state.pending_targets, state.pending_clarify, state.last_question = [], None, None
        state.document = render_markdown(state, ctx.domain, list(ctx.specs.values()))
        ctx.event(
            "stop",
            {
                "reason": stop.reason,
                "missing": stop.missing,
                "coverage": stop.coverage,
                "turn": stop.turn,
            },
        )
