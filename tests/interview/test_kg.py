"""The knowledge graph: SQLite by default, Neo4j behind the same interface (no server here:
an unreachable Neo4j is a warning, the batches wait in the outbox and are retried)."""

from __future__ import annotations

import socket

from core.interview.kg import (
    GraphBatch,
    KGEntity,
    KGPayload,
    KGRelation,
    SQLiteKnowledgeGraph,
)
from core.interview.kg_neo4j import CYPHER_ENTITIES, Neo4jKnowledgeGraph, cypher_statements
from core.interview.orchestrator import Interviewer, open_graph

from .conftest import APPENDIX_G, reply_for


def batch(conf: float, ts: float, label: str = "x") -> GraphBatch:
    return GraphBatch(
        provenance=f"test:{ts}",
        ts=ts,
        payload=KGPayload(
            entities=[
                KGEntity(id="owner:sre", label=label, type="owner", confidence=conf),
                KGEntity(id="slot:s:capa", label="CAPA", type="Slot:capa", confidence=1.0),
            ],
            relations=[
                KGRelation(source="slot:s:capa", target="owner:sre", type="OWNER", confidence=conf)
            ],
        ),
    )


def test_sqlite_upsert_keeps_max_confidence_provenance_and_timestamps(settings):
    graph = SQLiteKnowledgeGraph(settings.interview_db)
    graph.apply(batch(0.9, 100.0))
    graph.apply(batch(0.4, 200.0, label="SRE"))
    (row,) = graph.query(
        "SELECT label, confidence, provenance, created_ts, updated_ts "
        "FROM kg_entities WHERE id = 'owner:sre'"
    )
    assert row == ("SRE", 0.9, "test:200.0", 100.0, 200.0)
    (rel,) = graph.query("SELECT confidence FROM kg_relations")
    assert rel == (0.9,)
    graph.close()


def test_interview_builds_the_graph_with_pending_approvals(iv, clock, settings):
    result = iv.start("postmortem", "昨日の決済システムの障害について振り返りたい")
    sid = result.session.session_id
    while not result.done:
        clock.tick()
        result = iv.answer(sid, reply_for(result, APPENDIX_G))
    graph = SQLiteKnowledgeGraph(settings.interview_db)
    types = {t for (t,) in graph.query("SELECT type FROM kg_entities")}
    assert {"Session:postmortem", "Slot:capa", "owner", "Event"} <= types
    assert graph.query("SELECT COUNT(*) FROM kg_relations WHERE type = 'NEXT'")[0][0] >= 2
    pending = graph.query(
        "SELECT f.id, a.decision FROM kg_facts f JOIN kg_approvals a "
        "ON a.fact_id = f.id WHERE f.slot = 'capa'"
    )
    assert pending and all(d == "pending" for _, d in pending)
    fact_id = next(f.id for f in result.session.facts.values() if f.slot_name == "capa")
    state = iv.confirm_fact(sid, fact_id, "confirmed")
    assert state.approvals[f"a-{fact_id}"].decision == "confirmed"
    decided = graph.query(
        "SELECT decision FROM kg_approvals WHERE fact_id = ?", (f"{sid}:{fact_id}",)
    )
    assert decided == [("confirmed",)]
    assert iv.store.outbox_size() == 0


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_neo4j_never_stops_the_interview(make_settings_factory, clock):
    neo = make_settings_factory(neo4j_uri=f"bolt://127.0.0.1:{_closed_port()}", neo4j_password="x")
    assert isinstance(open_graph(neo), Neo4jKnowledgeGraph)
    iv = Interviewer(neo, clock=clock)
    result = iv.start("postmortem", "昨日の決済システムの障害について振り返りたい")
    assert result.question and any(
        "Neo4j" in w and "次のターンで再送" in w for w in result.warnings
    )
    clock.tick()
    result = iv.answer(result.session.session_id, APPENDIX_G["summary"])
    assert result.question and result.session.slots["summary"].filled
    waiting = iv.store.outbox_size()
    assert waiting >= 2  # nothing lost: every batch waits for the graph
    iv.close()
    local = make_settings_factory()  # same state folder, graph back (SQLite here)
    iv2 = Interviewer(local, clock=clock)
    clock.tick()
    after = iv2.answer(result.session.session_id, APPENDIX_G["impact"])
    assert not any("Neo4j" in w for w in after.warnings)
    assert iv2.store.outbox_size() == 0
    graph = SQLiteKnowledgeGraph(local.interview_db)
    assert graph.query("SELECT COUNT(*) FROM kg_entities WHERE type = 'Slot:summary'")[0][0] == 1
    iv2.close()


def test_cypher_follows_the_design():
    statements = cypher_statements(batch(0.5, 1.0))
    assert next(s for s, _ in statements) == CYPHER_ENTITIES
    assert "MERGE (n:Entity {id: e.id})" in CYPHER_ENTITIES
    assert "e.confidence > n.confidence" in CYPHER_ENTITIES
    relations = statements[1][0]
    assert "MERGE (s)-[rel:RELATION {type: r.type}]->(t)" in relations
    assert statements[1][1]["relations"][0]["type"] == "OWNER"
    assert "REQUIRES_APPROVAL" in statements[3][0]
