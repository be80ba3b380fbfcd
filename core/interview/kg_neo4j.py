"""The interview knowledge graph in Neo4j (``NEO4J_URI`` set): the design's Cypher (12.3).

``MERGE`` by id with uniqueness constraints on Entity, Fact and Approval ids; confidence keeps
the maximum; provenance and created/updated timestamps on nodes and relations. The driver
connects on first use with a short timeout; any failure propagates to ``kg.flush_outbox``,
which keeps the batch for the next turn and warns (an unreachable Neo4j never stops an
interview).
"""

from __future__ import annotations

from typing import Any

from core.interview.kg import GraphBatch

CYPHER_CONSTRAINTS = (
    "CREATE CONSTRAINT interview_entity_id IF NOT EXISTS FOR (n:Entity) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT interview_fact_id IF NOT EXISTS FOR (n:Fact) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT interview_approval_id IF NOT EXISTS FOR (n:Approval) REQUIRE n.id IS UNIQUE",
)
CYPHER_ENTITIES = """
UNWIND $entities AS e
MERGE (n:Entity {id: e.id})
ON CREATE SET n.created_ts = $ts
SET n.label = e.label, n.type = e.type,
    n.confidence = CASE WHEN n.confidence IS NULL OR e.confidence > n.confidence
                        THEN e.confidence ELSE n.confidence END,
    n.provenance = $provenance, n.updated_ts = $ts
"""
CYPHER_RELATIONS = """
UNWIND $relations AS r
MATCH (s:Entity {id: r.source}), (t:Entity {id: r.target})
MERGE (s)-[rel:RELATION {type: r.type}]->(t)
ON CREATE SET rel.created_ts = $ts
SET rel.confidence = CASE WHEN rel.confidence IS NULL OR r.confidence > rel.confidence
                          THEN r.confidence ELSE rel.confidence END,
    rel.provenance = $provenance, rel.updated_ts = $ts
"""
CYPHER_FACTS = """
UNWIND $facts AS f
MERGE (n:Fact {id: f.id})
SET n.text = f.text, n.belief = f.belief, n.impact = f.impact, n.status = f.status,
    n.session = f.session, n.slot = f.slot, n.updated_ts = $ts
"""
CYPHER_APPROVALS = """
UNWIND $approvals AS a
MATCH (f:Fact {id: a.fact_id})
MERGE (ap:Approval {id: a.id})
SET ap.fact_id = a.fact_id, ap.decision = a.decision, ap.approver = a.approver, ap.ts = a.ts
MERGE (f)-[:REQUIRES_APPROVAL]->(ap)
"""


def cypher_statements(batch: GraphBatch) -> list[tuple[str, dict[str, Any]]]:
    """The Cypher a batch runs (in this order, in one transaction)."""
    base = {"ts": batch.ts, "provenance": batch.provenance}
    return [
        (CYPHER_ENTITIES, {**base, "entities": [e.model_dump() for e in batch.payload.entities]}),
        (
            CYPHER_RELATIONS,
            {**base, "relations": [r.model_dump() for r in batch.payload.relations]},
        ),
        (CYPHER_FACTS, {**base, "facts": [f.model_dump() for f in batch.facts]}),
        (CYPHER_APPROVALS, {**base, "approvals": [a.model_dump() for a in batch.approvals]}),
    ]


class Neo4jKnowledgeGraph:
    """The same graph in Neo4j (``NEO4J_URI``); the driver connects on first use."""

    name = "neo4j"

    def __init__(self, uri: str, user: str, password: str | None, timeout: float = 3.0) -> None:
        self.uri, self.user, self.password, self.timeout = uri, user, password, timeout
        self._driver: Any = None

    def _connect(self) -> Any:
        if self._driver is None:
            import neo4j

            auth = (self.user, self.password) if self.password is not None else None
            driver = neo4j.GraphDatabase.driver(
                self.uri,
                auth=auth,
                connection_timeout=self.timeout,
                max_transaction_retry_time=self.timeout,
            )
            try:
                driver.verify_connectivity()
                for statement in CYPHER_CONSTRAINTS:
                    driver.execute_query(statement)
            except Exception:
                driver.close()
                raise
            self._driver = driver
        return self._driver

    def apply(self, batch: GraphBatch) -> None:
        driver = self._connect()

        def work(tx: Any) -> None:
            for statement, params in cypher_statements(batch):
                tx.run(statement, params).consume()

        try:
            with driver.session() as session:
                session.execute_write(work)
        except Exception:
            self.close()
            raise

    def close(self) -> None:
        if self._driver is not None:
            self._driver.close()
            self._driver = None
