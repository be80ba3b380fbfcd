"""The entity graph in Neo4j (``NEO4J_URI`` set): the Cypher it runs and ``Neo4jGraphStore``.

``(:Chunk {id, doc_id})-[:MENTIONS {pos}]->(:Entity {key, type, surface})``; each call is its
own Neo4j transaction and ``replace_doc`` is idempotent per document (call it after the SQLite
commit). Scoring is shared with the SQLite backend (``core.retrieval.graph``). The Cypher
builders are pure functions, tested without a server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.errors import IndexStateError
from core.retrieval.graph import (
    MIN_COOCCURRENCE,
    NEIGHBOUR_MIN_SHARE,
    Cooccurrence,
    Credit,
    EntityKey,
    ScoredGraphStore,
    mention_rows,
)
from core.text.entities import Entity


# --- Neo4j: Cypher builders (pure) --------------------------------------------------------
def cypher_schema() -> list[str]:
    return [
        "CREATE CONSTRAINT chunk_id_unique IF NOT EXISTS FOR (c:Chunk) REQUIRE c.id IS UNIQUE",
        "CREATE CONSTRAINT entity_key_type_unique IF NOT EXISTS "
        "FOR (e:Entity) REQUIRE (e.key, e.type) IS UNIQUE",
        "CREATE INDEX chunk_doc_id IF NOT EXISTS FOR (c:Chunk) ON (c.doc_id)",
    ]


def cypher_chunk_conflict() -> str:
    return (
        "UNWIND $chunk_ids AS chunk_id MATCH (c:Chunk {id: chunk_id}) "
        "WHERE c.doc_id <> $doc_id RETURN c.id AS chunk_id, c.doc_id AS doc_id LIMIT 1"
    )


def cypher_doc_entities() -> str:
    return (
        "MATCH (:Chunk {doc_id: $doc_id})-[:MENTIONS]->(e:Entity) "
        "RETURN DISTINCT e.key AS key, e.type AS type"
    )


def cypher_delete_doc() -> str:
    return "MATCH (c:Chunk {doc_id: $doc_id}) DETACH DELETE c"


def cypher_write_mentions() -> str:
    return (
        "UNWIND $rows AS row "
        "MERGE (c:Chunk {id: row.chunk_id}) SET c.doc_id = $doc_id "
        "WITH c, row UNWIND row.entities AS ent "
        "MERGE (e:Entity {key: ent.key, type: ent.type}) ON CREATE SET e.surface = ent.surface "
        "MERGE (c)-[r:MENTIONS]->(e) SET r.pos = ent.pos"
    )


def cypher_prune_entities() -> str:
    return (
        "UNWIND $entities AS ent MATCH (e:Entity {key: ent.key, type: ent.type}) "
        "WHERE NOT EXISTS { (e)<-[:MENTIONS]-(:Chunk) } DELETE e"
    )


def cypher_stats() -> str:
    return (
        "CALL { MATCH (c:Chunk) RETURN count(c) AS n } "
        "UNWIND $entities AS ent OPTIONAL MATCH (e:Entity {key: ent.key, type: ent.type}) "
        "RETURN n, ent.key AS key, ent.type AS type, "
        "CASE WHEN e IS NULL THEN 0 ELSE COUNT { (e)<-[:MENTIONS]-(:Chunk) } END AS df"
    )


def cypher_cooccurring() -> str:
    return (
        "UNWIND $sources AS src "
        "MATCH (:Entity {key: src.key, type: src.type})<-[:MENTIONS]-(c:Chunk)"
        "-[:MENTIONS]->(n:Entity) "
        "WITH src, n, count(DISTINCT c) AS cooc WHERE cooc >= $min_cooccurrence "
        "WITH src, n, cooc, COUNT { (n)<-[:MENTIONS]-(:Chunk) } AS df "
        "WHERE cooc >= $min_share * df "
        "RETURN src.key AS source_key, src.type AS source_type, n.key AS key, n.type AS type, "
        "cooc, df"
    )


def cypher_sums(filtered: bool) -> str:
    where = "WHERE c.id IN $allowed " if filtered else ""
    return (
        "UNWIND $credits AS w "
        "MATCH (:Entity {key: w.key, type: w.type})<-[:MENTIONS]-(c:Chunk) "
        f"{where}"
        "WITH c, w.slot AS slot, max(w.credit) AS credit "
        "WITH c, sum(credit) AS score "
        "RETURN c.id AS chunk_id, score ORDER BY round(score, 9) DESC, chunk_id ASC LIMIT $k"
    )


def cypher_entities_for_chunk() -> str:
    return (
        "MATCH (:Chunk {id: $chunk_id})-[r:MENTIONS]->(e:Entity) "
        "RETURN e.key AS key, e.type AS type, e.surface AS surface ORDER BY r.pos"
    )


CYPHER_ENTITY_COUNT = "MATCH (e:Entity) RETURN count(e) AS n"
CYPHER_MENTION_COUNT = "MATCH (:Chunk)-[r:MENTIONS]->(:Entity) RETURN count(r) AS n"


# --- Neo4j --------------------------------------------------------------------------------
_NEO4J_FAILED = "グラフデータベース (Neo4j) の処理に失敗しました。"


class Neo4jGraphStore(ScoredGraphStore):
    """The same graph in Neo4j through the official driver (each call is one transaction)."""

    def __init__(
        self,
        uri: str,
        user: str,
        password: str | None,
        database: str | None = None,
        *,
        connection_timeout: float = 5.0,
    ) -> None:
        try:
            import neo4j
        except ImportError as exc:  # pragma: no cover - the driver is a dependency
            raise IndexStateError(
                "Neo4j ドライバ (neo4j パッケージ) がインストールされていません。", detail=str(exc)
            ) from exc
        self._neo4j = neo4j
        self._database = database
        auth = (user, password) if password is not None else None
        self._driver = None
        try:
            self._driver = neo4j.GraphDatabase.driver(
                uri, auth=auth, connection_timeout=connection_timeout
            )
            self._driver.verify_connectivity()
            for statement in cypher_schema():
                self._driver.execute_query(statement, database_=database)
        except neo4j.exceptions.AuthError as exc:
            self.close()
            raise IndexStateError(
                "Neo4j の認証に失敗しました。NEO4J_USER と NEO4J_PASSWORD を確認してください。",
                detail=str(exc),
            ) from exc
        except (
            neo4j.exceptions.Neo4jError,
            neo4j.exceptions.DriverError,
            OSError,
            ValueError,
        ) as exc:
            self.close()
            raise IndexStateError(
                f"グラフデータベース (Neo4j) に接続できません: {uri}。"
                "NEO4J_URI を確認するか、未設定にして SQLite のグラフを使ってください。",
                detail=str(exc),
            ) from exc

    def _read(self, query: str, **params: Any) -> list[Any]:
        try:
            records, _, _ = self._driver.execute_query(
                query,
                params,
                database_=self._database,
                routing_=self._neo4j.RoutingControl.READ,
            )
        except (self._neo4j.exceptions.Neo4jError, self._neo4j.exceptions.DriverError) as exc:
            raise IndexStateError(_NEO4J_FAILED, detail=str(exc)) from exc
        return records

    def replace_doc(self, doc_id: str, chunk_entities: Mapping[str, Sequence[Entity]]) -> None:
        rows = mention_rows(chunk_entities)

        def work(tx: Any) -> tuple[str, str] | None:
            clash = tx.run(
                cypher_chunk_conflict(), chunk_ids=[r["chunk_id"] for r in rows], doc_id=doc_id
            ).single()
            if clash is not None:
                return clash["chunk_id"], clash["doc_id"]
            old = [dict(record) for record in tx.run(cypher_doc_entities(), doc_id=doc_id)]
            tx.run(cypher_delete_doc(), doc_id=doc_id).consume()
            tx.run(cypher_write_mentions(), rows=rows, doc_id=doc_id).consume()
            tx.run(cypher_prune_entities(), entities=old).consume()  # new ones have mentions
            return None

        clash = self._write(work)
        if clash is not None:
            raise IndexStateError(
                "グラフ索引が不整合です: 同じチャンクIDが別の文書に登録されています。",
                detail=f"chunk {clash[0]!r} belongs to {clash[1]!r}, not {doc_id!r}",
            )

    def remove_doc(self, doc_id: str) -> None:
        def work(tx: Any) -> None:
            old = [dict(record) for record in tx.run(cypher_doc_entities(), doc_id=doc_id)]
            tx.run(cypher_delete_doc(), doc_id=doc_id).consume()
            tx.run(cypher_prune_entities(), entities=old).consume()

        self._write(work)

    def _write(self, work: Any) -> Any:
        try:
            with self._driver.session(database=self._database) as session:
                return session.execute_write(work)
        except (self._neo4j.exceptions.Neo4jError, self._neo4j.exceptions.DriverError) as exc:
            raise IndexStateError(_NEO4J_FAILED, detail=str(exc)) from exc

    def _stats(self, query: list[EntityKey]) -> tuple[int, dict[EntityKey, int]]:
        records = self._read(cypher_stats(), entities=[{"key": k, "type": t} for k, t in query])
        n_chunks = int(records[0]["n"]) if records else 0
        return n_chunks, {(r["key"], r["type"]): int(r["df"]) for r in records}

    def _cooccurring(self, sources: list[EntityKey]) -> list[Cooccurrence]:
        records = self._read(
            cypher_cooccurring(),
            sources=[{"key": k, "type": t} for k, t in sources],
            min_cooccurrence=MIN_COOCCURRENCE,
            min_share=NEIGHBOUR_MIN_SHARE,
        )
        return [
            Cooccurrence(
                (r["source_key"], r["source_type"]), (r["key"], r["type"]), r["cooc"], r["df"]
            )
            for r in records
        ]

    def _sums(
        self, credits: list[Credit], k: int, allowed: list[str] | None
    ) -> list[tuple[str, float]]:
        params: dict[str, Any] = {
            "credits": [
                {"key": c.key, "type": c.type, "slot": c.slot, "credit": c.credit} for c in credits
            ],
            "k": k,
        }
        if allowed is not None:
            params["allowed"] = allowed
        records = self._read(cypher_sums(allowed is not None), **params)
        return [(r["chunk_id"], float(r["score"])) for r in records]

    def entity_count(self) -> int:
        return int(self._read(CYPHER_ENTITY_COUNT)[0]["n"])

    def mention_count(self) -> int:
        return int(self._read(CYPHER_MENTION_COUNT)[0]["n"])

    def entities_for_chunk(self, chunk_id: str) -> list[Entity]:
        records = self._read(cypher_entities_for_chunk(), chunk_id=chunk_id)
        return [Entity(r["key"], r["type"], r["surface"]) for r in records]

    def close(self) -> None:
        if self._driver is not None:
            self._driver.close()
            self._driver = None
