"""The interview orchestrator: the public API over one turn loop (design 3.1 Orchestrator).

``Interviewer`` entry points: ``start(domain, topic)``, ``answer(session_id, text)``,
``abort(session_id)``, ``resume(session_id)``, ``confirm_fact(...)``, ``sessions()``,
``gaps(state)``. Each returns a ``TurnResult``: the question, the decision (VoI, reason), the
stop and the document when the interview ended, new contradictions, warnings.

Every turn is persisted: the WAL records are written ahead of the SQLite commit (one fsync),
knowledge-graph batches go to the store's outbox in the same transaction and are flushed
afterwards (a graph failure is a warning; the batches are retried on the next turn). A corrupt
session row is recovered from the WAL.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.access import LOCAL, Principal
from core.errors import InputError
from core.interview.adaptation import adapted_values
from core.interview.answers import AnswerKind, classify_answer, detect_language
from core.interview.artifacts import render_markdown
from core.interview.domains import get_domain
from core.interview.evidence import EvidenceSource
from core.interview.extraction import extract_topic
from core.interview.fill import apply_candidates, recompute
from core.interview.gap import Gap, analyze_gaps
from core.interview.kg import (
    KnowledgeGraph,
    SQLiteKnowledgeGraph,
    build_batch,
    flush_outbox,
)
from core.interview.kg_neo4j import Neo4jKnowledgeGraph
from core.interview.params import VoIParams
from core.interview.policy import PolicyProvider, get_policy
from core.interview.slots import slot_from_spec
from core.interview.state import (
    Contradiction,
    Decision,
    Hypothesis,
    Message,
    SessionState,
    StopInfo,
)
from core.interview.stop import abort_stop
from core.interview.store import (
    CorruptSessionError,
    SessionStore,
    SessionSummary,
    open_session_store,
)
from core.interview.turnloop import TurnContext, TurnLoop, iso, session_specs
from core.interview.wal import (
    RECOVERED_MESSAGE,
    WalWriter,
    pseudonymize,
    recover_session,
    wal_files,
    wal_salt,
)
from core.settings import Settings

log = logging.getLogger(__name__)
MAX_TOPIC_CHARS = 200
ENDED = "このインタビューは終了しています。"


@dataclass(slots=True)
class TurnResult:
    session: SessionState
    question: str | None
    decision: Decision | None
    stop: StopInfo | None
    document: str | None
    contradictions: list[Contradiction] = field(default_factory=list)
    resolved: list[Contradiction] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    updated_slots: list[str] = field(default_factory=list)
    latency_ms: float = 0.0
    notice: str | None = None

    @property
    def done(self) -> bool:
        return self.session.status == "stopped"


def open_graph(settings: Settings) -> KnowledgeGraph:
    """The knowledge graph backend: Neo4j when ``NEO4J_URI`` is set, else SQLite."""
    if settings.neo4j_uri:
        return Neo4jKnowledgeGraph(settings.neo4j_uri, settings.neo4j_user, settings.neo4j_password)
    return SQLiteKnowledgeGraph(settings.interview_db)


def _as_is(state: SessionState, warnings: list[str], notice: str | None = None) -> TurnResult:
    return TurnResult(
        state,
        state.last_question,
        state.last_decision,
        state.stop,
        state.document,
        warnings=warnings,
        notice=notice,
    )


class Interviewer:
    """The curiosity-driven interviewer over a session store, a WAL and a knowledge graph."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: SessionStore | None = None,
        graph: KnowledgeGraph | None = None,
        policy: str | PolicyProvider = "heuristic_voi",
        params: VoIParams | None = None,
        evidence: EvidenceSource | None = None,
        llm: Any = "auto",
        clock: Callable[[], float] = time.time,
        durable_wal: bool = True,
    ) -> None:
        self.settings = settings
        self.store = store or open_session_store(settings)
        self.graph = graph or open_graph(settings)
        self.policy = get_policy(policy) if isinstance(policy, str) else policy
        self.params = params or VoIParams()
        self.evidence = evidence
        self.clock = clock
        self.salt = wal_salt(settings)
        self.wal = WalWriter(settings.wal_dir, self.salt, durable=durable_wal)
        if llm == "auto":
            llm = None
            if settings.llm_enabled:
                from core.interview.llm import InterviewLLM

                llm = InterviewLLM(settings)
        self.llm = llm
        self.loop = TurnLoop(self.policy, self.params, evidence, llm)

    def close(self) -> None:
        """Close this thread's database connections (and the graph's driver)."""
        self.store.close()
        self.graph.close()

    # --- sessions ------------------------------------------------------------------------
    def start(
        self,
        domain: str,
        topic: str,
        *,
        user_id: str = "local",
        language: str | None = None,
        actor: Principal = LOCAL,
    ) -> TurnResult:
        """Open a session on ``topic`` (the user's first message) and ask the first question.

        ``actor`` (every public method takes one): who acts, recorded on each WAL event."""
        t0 = time.perf_counter()
        spec = get_domain(domain)
        text = " ".join((topic or "").split())
        if not text:
            raise InputError("テーマ（何についてのインタビューか）を入力してください。")
        now = self.clock()
        sid = uuid.uuid4().hex
        state = SessionState(
            session_id=sid,
            user_id=user_id or "local",
            topic=text[:MAX_TOPIC_CHARS],
            language=language or detect_language(text),  # type: ignore[arg-type]
            goal_kind=spec.name,
            slots={s.name: slot_from_spec(s) for s in spec.slots},
            hypothesis=Hypothesis(
                id=f"h-{sid[:8]}", text=spec.hypothesis.replace("{topic}", text[:60])
            ),
            created_at=iso(now),
            updated_at=iso(now),
            policy=getattr(self.policy, "name", "heuristic_voi"),
            turn=1,
        )
        state.messages.append(
            Message(
                timestamp=iso(now),
                question=None,
                answer=topic,
                turn=1,
                kind="topic",
                language=state.language,
            )
        )
        ctx = TurnContext(state, spec, session_specs(state, spec), now, self.wal, actor=actor)
        if self.llm is not None:
            extra = self.llm.propose_slots(state, spec)
            if extra:
                state.extra_slots = extra
                state.slots.update({s.name: slot_from_spec(s) for s in extra})
                ctx.specs = session_specs(state, spec)
        ctx.event(
            "session_started", {"domain": spec.name, "topic": state.topic, "policy": state.policy}
        )
        candidates = extract_topic(text, ctx.specs, ctx.today)
        ctx.report = apply_candidates(state, ctx.specs, candidates, turn=1, now=now)
        # the session node first (with whatever the topic already told us)
        ctx.outbox.append(build_batch(state, ctx.report.new_facts, ctx.specs, now).model_dump())
        self.loop.advance(ctx, first=True)
        return self._commit(ctx, t0)

    def answer(self, session_id: str, text: str, *, actor: Principal = LOCAL) -> TurnResult:
        """Take the answer to the pending question and reply with the next one (or stop)."""
        t0 = time.perf_counter()
        state, warnings = self._load(session_id)
        if state.status == "stopped":
            return _as_is(state, warnings, ENDED)
        text = text or ""
        ctx = self._context(state, warnings, actor)
        state.turn += 1
        targets = list(state.pending_targets)
        kind = classify_answer(text)
        language = detect_language(text)
        state.messages.append(
            Message(
                timestamp=iso(ctx.now),
                question=state.last_question,
                answer=text,
                turn=state.turn,
                targets=targets,
                kind=kind.value,
                language=language,
            )
        )
        ctx.event(
            "answer",
            {
                "turn": state.turn,
                "targets": targets,
                "kind": kind.value,
                "chars": len(text),
                "text": text[:2000],
                "language": language,
            },
        )
        if kind == AnswerKind.ABORT:
            self.loop.finish(ctx, abort_stop(state, ctx.now))
            return self._commit(ctx, t0)
        unanswered = self.loop.observe(ctx, text, targets)
        self.loop.advance(ctx, unanswered=unanswered)
        return self._commit(ctx, t0)

    def abort(self, session_id: str, *, actor: Principal = LOCAL) -> TurnResult:
        """End the interview now; the document is written from what is known."""
        t0 = time.perf_counter()
        state, warnings = self._load(session_id)
        if state.status == "stopped":
            return _as_is(state, warnings, ENDED)
        ctx = self._context(state, warnings, actor)
        self.loop.finish(ctx, abort_stop(state, ctx.now))
        return self._commit(ctx, t0)

    def resume(self, session_id: str) -> TurnResult:
        """The session as stored: its pending question (or its stop and document)."""
        state, warnings = self._load(session_id)
        return _as_is(state, warnings)

    def sessions(
        self, user_id: str | None = None, status: str | None = None
    ) -> list[SessionSummary]:
        return self.store.list(user_id=user_id, status=status)

    def gaps(self, state: SessionState) -> list[Gap]:
        return analyze_gaps(state, self.clock(), self.params.tau_staleness)

    def specs_for(self, state: SessionState) -> dict[str, Any]:
        return session_specs(state, get_domain(state.goal_kind))

    def estimates(self, state: SessionState) -> dict[str, Any]:
        """The session's adapted VoI parameters (design 10.7 / 10.8): the costs and, per slot,
        the effective importance, P(answerable) and retrievability."""
        return adapted_values(
            state,
            self.specs_for(state),
            self.params,
            list(state.slots),
            search=self.evidence is not None,
        )

    def confirm_fact(
        self,
        session_id: str,
        fact_id: str,
        decision: str = "confirmed",
        approver: str = "user",
        *,
        actor: Principal = LOCAL,
    ) -> SessionState:
        """Approve or reject a pending fact (design 12.1 Approval); a rejected value no longer
        fills its slot."""
        if decision not in ("confirmed", "rejected"):
            raise InputError("承認の結果は confirmed か rejected を指定してください。")
        state, warnings = self._load(session_id)
        fact = state.facts.get(fact_id)
        if fact is None:
            raise InputError(f"事実が見つかりません: {fact_id}")
        ctx = self._context(state, warnings, actor)
        fact.status = decision  # type: ignore[assignment]
        approval = state.approvals.get(f"a-{fact_id}")
        if approval:
            approval.decision, approval.approver, approval.ts = decision, approver, ctx.now  # type: ignore[assignment]
        if fact.slot_name in ctx.specs:
            recompute(state, ctx.specs[fact.slot_name], ctx.now)
        ctx.event("fact_decision", {"fact_id": fact_id, "decision": decision})
        batch = build_batch(state, [fact], ctx.specs, ctx.now, [approval] if approval else [])
        ctx.outbox.append(batch.model_dump())
        if state.status == "stopped":
            state.document = render_markdown(state, ctx.domain, list(ctx.specs.values()))
        self._commit(ctx, time.perf_counter())
        return state

    # --- internals -----------------------------------------------------------------------
    def _context(
        self, state: SessionState, warnings: list[str], actor: Principal = LOCAL
    ) -> TurnContext:
        domain = get_domain(state.goal_kind)
        return TurnContext(
            state,
            domain,
            session_specs(state, domain),
            self.clock(),
            self.wal,
            warnings=list(warnings),
            actor=actor,
        )

    def _commit(self, ctx: TurnContext, t0: float) -> TurnResult:
        state = ctx.state
        state.updated_at = iso(ctx.now)
        state.warnings = (state.warnings + ctx.warnings)[-20:]
        ctx.event(
            "session_stopped" if state.status == "stopped" else "turn_committed",
            {"turn": state.turn, "snapshot": pseudonymize(state, self.salt)},
        )
        try:
            self.wal.append(ctx.records)
        except OSError as exc:  # the WAL is the audit trail; the session store is authoritative
            log.warning("WAL write failed: %s", exc)
            ctx.warnings.append("WAL に書き込めませんでした（セッションは保存されています）。")
        self.store.save(state, ctx.outbox, expected_version=state.version or None)
        flushed = flush_outbox(self.store, self.graph)
        if flushed.warning:
            ctx.warnings.append(flushed.warning)
        return TurnResult(
            session=state,
            question=state.last_question,
            decision=state.last_decision,
            stop=state.stop,
            document=state.document,
            contradictions=list(ctx.report.contradictions),
            resolved=list(ctx.resolved),
            warnings=list(dict.fromkeys(ctx.warnings)),
            updated_slots=list(dict.fromkeys(ctx.report.updated)),
            latency_ms=(time.perf_counter() - t0) * 1000.0,
        )

    def _load(self, session_id: str) -> tuple[SessionState, list[str]]:
        """The stored session; a corrupt row is recovered from the WAL when possible."""
        try:
            return self.store.load(session_id), []
        except CorruptSessionError:
            paths = wal_files(self.settings.wal_dir)
            state = recover_session(self.store, self.wal, paths, session_id)
            if state is None:
                raise
            return state, [RECOVERED_MESSAGE]
