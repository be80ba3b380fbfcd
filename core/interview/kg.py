"""The interview knowledge graph (design 10.1 KG, 12.x): entities, relations, Fact/Approval.

Stage03 (merge) turns a turn's new facts into a ``GraphBatch`` (``build_batch``): the session,
one node per filled slot, the entities its fields name (owners, URLs, references, commands,
categories), the timeline as NEXT relations, and the facts with their approvals (critical facts
and facts from retrieval or inference stay ``pending`` until the user confirms them).

Batches go to the store's outbox in the turn's transaction; ``flush_outbox`` hands them to the
backend: ``SQLiteKnowledgeGraph`` (default, in ``interview.sqlite``) or ``Neo4jKnowledgeGraph``
(``NEO4J_URI`` set; the design's Cypher with ``MERGE`` by id; ``orchestrator.open_graph`` chooses). Upserts keep the maximum
confidence, the provenance and created/updated timestamps. A backend failure is a warning: the
batches stay in the outbox and are retried on the next turn. It never stops the interview.
The graph is for looking across sessions, not for writing documents: every string of a batch is
masked (``core.masking``) before it reaches a backend, while the sealed session keeps the text.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from core.interview.domains import SlotSpec
from core.interview.state import Approval, Fact, SessionState
from core.interview.store import SessionStore, ThreadConnections
from core.masking import mask_value

log = logging.getLogger(__name__)

ENTITY_KINDS = {"owner", "url", "ref", "command", "category", "heat"}


class KGEntity(BaseModel):
    id: str
    label: str
    type: str | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)


class KGRelation(BaseModel):
    source: str
    target: str
    type: str
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)


class KGPayload(BaseModel):
    """The design's KGPayload (appendix A); also the LLM extraction's output."""

    entities: list[KGEntity] = Field(default_factory=list)
    relations: list[KGRelation] = Field(default_factory=list)


class FactNode(BaseModel):
    id: str
    text: str
    belief: float = Field(ge=0.0, le=1.0)
    impact: Literal["normal", "critical"]
    status: Literal["pending", "confirmed", "rejected"]
    session: str
    slot: str


class ApprovalNode(BaseModel):
    id: str
    fact_id: str
    decision: Literal["pending", "confirmed", "rejected"]
    approver: str | None = None
    ts: float | None = None


class GraphBatch(BaseModel):
    provenance: str
    ts: float
    payload: KGPayload = Field(default_factory=KGPayload)
    facts: list[FactNode] = Field(default_factory=list)
    approvals: list[ApprovalNode] = Field(default_factory=list)


def _ent_id(kind: str, value: str) -> str:
    return f"{kind}:{' '.join(str(value).split()).casefold()[:200]}"


class _PayloadBuilder:
    """Entities by id and relations by (source, target, type), each keeping its highest
    confidence."""

    def __init__(self) -> None:
        self.entities: dict[str, KGEntity] = {}
        self.relations: dict[tuple[str, str, str], KGRelation] = {}

    def entity(self, eid: str, label: str, etype: str, conf: float) -> None:
        self.entities[eid] = KGEntity(id=eid, label=label, type=etype, confidence=conf)

    def relate(self, source: str, target: str, rtype: str, conf: float) -> None:
        key = (source, target, rtype)
        old = self.relations.get(key)
        if old is None or (old.confidence or 0) < conf:
            self.relations[key] = KGRelation(
                source=source, target=target, type=rtype, confidence=conf
            )

    def payload(self) -> KGPayload:
        return KGPayload(
            entities=list(self.entities.values()), relations=list(self.relations.values())
        )


def _fact_entities(
    graph: _PayloadBuilder, sid: str, slot_node: str, fact: Fact, spec: SlotSpec, conf: float
) -> None:
    """The entities a fact's fields name (per item for lists) and its items' timeline: an
    Event per item with a time, linked in order by NEXT."""
    kinds = {f.name: f.kind for f in spec.fields}
    time_field = next((n for n, k in kinds.items() if k == "time"), None)
    previous_event = None
    for row in [fact.fields, *fact.items]:
        for name, value in row.items():
            if kinds.get(name) not in ENTITY_KINDS or not value:
                continue
            for part in str(value).split(", ") if kinds[name] in ("url", "ref") else [value]:
                eid = _ent_id(kinds[name], part)
                graph.entity(eid, str(part)[:200], kinds[name], conf)
                graph.relate(slot_node, eid, name.upper(), conf)
        if time_field and row is not fact.fields and row.get(time_field):
            eid = f"event:{sid}:{row[time_field]}"
            graph.entity(eid, " ".join(str(v) for v in row.values())[:200], "Event", conf)
            graph.relate(slot_node, eid, "EVENT", conf)
            if previous_event:
                graph.relate(previous_event, eid, "NEXT", conf)
            previous_event = eid


def _payload(state: SessionState, facts: list[Fact], specs: dict[str, SlotSpec]) -> KGPayload:
    """The session, one node per slot with a new fact, and the entities the facts name."""
    sid = state.session_id
    session_node = f"session:{sid}"
    graph = _PayloadBuilder()
    graph.entity(session_node, state.topic[:120], f"Session:{state.goal_kind}", 1.0)
    for fact in facts:
        conf = round(min(1.0, max(0.0, fact.confidence)), 4)
        slot_node = f"slot:{sid}:{fact.slot_name}"
        graph.entity(slot_node, fact.text[:200], f"Slot:{fact.slot_name}", conf)
        graph.relate(session_node, slot_node, f"HAS_{fact.slot_name.upper()}", conf)
        spec = specs.get(fact.slot_name)
        if spec is not None:
            _fact_entities(graph, sid, slot_node, fact, spec, conf)
    return graph.payload()


def _approval_nodes(
    state: SessionState, facts: list[Fact], approvals: list[Approval] | None
) -> list[ApprovalNode]:
    """The given approvals, or else the session's approvals of ``facts``."""
    sid = state.session_id
    wanted = {f.id for f in facts}
    return [
        ApprovalNode(
            id=f"{sid}:{a.id}",
            fact_id=f"{sid}:{a.fact_id}",
            decision=a.decision,
            approver=a.approver,
            ts=a.ts,
        )
        for a in (approvals if approvals is not None else state.approvals.values())
        if approvals is not None or a.fact_id in wanted
    ]


def build_batch(
    state: SessionState,
    facts: list[Fact],
    specs: dict[str, SlotSpec],
    ts: float,
    approvals: list[Approval] | None = None,
) -> GraphBatch:
    """The turn's graph batch: the entities and relations of ``facts``, the facts themselves
    and their approvals."""
    sid = state.session_id
    fact_nodes = [
        FactNode(
            id=f"{sid}:{f.id}",
            text=f.text[:500],
            belief=f.belief,
            impact=f.impact,
            status=f.status,
            session=sid,
            slot=f.slot_name,
        )
        for f in facts
    ]
    return GraphBatch(
        provenance=f"interview:{sid}:turn{state.turn}",
        ts=ts,
        payload=_payload(state, facts, specs),
        facts=fact_nodes,
        approvals=_approval_nodes(state, facts, approvals),
    )


def llm_batch(
    state: SessionState,
    entities: list[dict[str, Any]],
    relations: list[dict[str, Any]],
    ts: float,
) -> GraphBatch:
    """The LLM's Stage02 KGPayload, its ids scoped to the session."""
    prefix = f"llm:{state.session_id}:"
    payload = KGPayload(
        entities=[KGEntity(**{**e, "id": prefix + e["id"]}) for e in entities],
        relations=[
            KGRelation(**{**r, "source": prefix + r["source"], "target": prefix + r["target"]})
            for r in relations
        ],
    )
    return GraphBatch(
        provenance=f"llm:stage02:{state.session_id}:turn{state.turn}", ts=ts, payload=payload
    )


class KnowledgeGraph(Protocol):
    name: str

    def apply(self, batch: GraphBatch) -> None: ...

    def close(self) -> None: ...


SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS kg_entities (
    id TEXT PRIMARY KEY, label TEXT NOT NULL, type TEXT, confidence REAL,
    provenance TEXT, created_ts REAL NOT NULL, updated_ts REAL NOT NULL);
CREATE TABLE IF NOT EXISTS kg_relations (
    source TEXT NOT NULL, target TEXT NOT NULL, type TEXT NOT NULL, confidence REAL,
    provenance TEXT, created_ts REAL NOT NULL, updated_ts REAL NOT NULL,
    PRIMARY KEY (source, target, type));
CREATE TABLE IF NOT EXISTS kg_facts (
    id TEXT PRIMARY KEY, text TEXT NOT NULL, belief REAL NOT NULL, impact TEXT NOT NULL,
    status TEXT NOT NULL, session TEXT NOT NULL, slot TEXT NOT NULL, updated_ts REAL NOT NULL);
CREATE TABLE IF NOT EXISTS kg_approvals (
    id TEXT PRIMARY KEY, fact_id TEXT NOT NULL, decision TEXT NOT NULL, approver TEXT, ts REAL);
"""


class SQLiteKnowledgeGraph:
    """The graph in SQLite tables beside the sessions (``settings.interview_db``)."""

    name = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._conns = ThreadConnections(self.path)
        self._conns.get().executescript(SQLITE_SCHEMA)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        conn = self._conns.get()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def apply(self, batch: GraphBatch) -> None:
        ts, prov = batch.ts, batch.provenance
        with self._transaction() as conn:
            conn.executemany(
                "INSERT INTO kg_entities VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET"
                " label=excluded.label, type=coalesce(excluded.type, kg_entities.type),"
                " confidence=max(coalesce(kg_entities.confidence, 0), coalesce(excluded.confidence, 0)),"
                " provenance=excluded.provenance, updated_ts=excluded.updated_ts",
                [
                    (e.id, e.label, e.type, e.confidence, prov, ts, ts)
                    for e in batch.payload.entities
                ],
            )
            conn.executemany(
                "INSERT INTO kg_relations VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(source, target, type) DO UPDATE SET"
                " confidence=max(coalesce(kg_relations.confidence, 0), coalesce(excluded.confidence, 0)),"
                " provenance=excluded.provenance, updated_ts=excluded.updated_ts",
                [
                    (r.source, r.target, r.type, r.confidence, prov, ts, ts)
                    for r in batch.payload.relations
                ],
            )
            conn.executemany(
                "INSERT INTO kg_facts VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET"
                " text=excluded.text, belief=excluded.belief, impact=excluded.impact,"
                " status=excluded.status, updated_ts=excluded.updated_ts",
                [
                    (f.id, f.text, f.belief, f.impact, f.status, f.session, f.slot, ts)
                    for f in batch.facts
                ],
            )
            conn.executemany(
                "INSERT INTO kg_approvals VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET"
                " decision=excluded.decision, approver=excluded.approver, ts=excluded.ts",
                [(a.id, a.fact_id, a.decision, a.approver, a.ts) for a in batch.approvals],
            )

    def query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return self._conns.get().execute(sql, args).fetchall()

    def close(self) -> None:
        self._conns.close()


@dataclass(frozen=True, slots=True)
class FlushResult:
    applied: int
    pending: int
    warning: str | None = None


def flush_outbox(store: SessionStore, graph: KnowledgeGraph, limit: int = 200) -> FlushResult:
    """Hand the pending batches to the graph; on failure keep them for the next turn."""
    pending = store.outbox(limit)
    done: list[int] = []
    for seq, raw in pending:
        try:
            graph.apply(GraphBatch.model_validate(mask_value(raw)))
        except Exception as exc:
            rest = [s for s, _ in pending if s not in done]
            store.outbox_failed(rest, f"{type(exc).__name__}: {exc}")
            store.outbox_done(done)
            log.warning("knowledge graph (%s) unavailable: %s", graph.name, exc)
            where = "Neo4j" if graph.name == "neo4j" else "SQLite"
            return FlushResult(
                len(done),
                store.outbox_size(),
                f"ナレッジグラフ（{where}）に書き込めませんでした。インタビューは続行し、"
                f"次のターンで再送します（未送信 {store.outbox_size()} 件）。",
            )
        done.append(seq)
    store.outbox_done(done)
    return FlushResult(len(done), store.outbox_size())
