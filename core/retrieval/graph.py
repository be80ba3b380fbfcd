"""The entity graph of a corpus: which chunks mention which entities, and the graph strategy.

Two backends implement ``GraphStore``:

- ``SQLiteGraphStore`` (default) lives in the corpus' own SQLite file and works on the caller's
  ``sqlite3.Connection``: it never begins, commits or rolls back, so chunks and mentions change
  in one transaction of the caller. Tables: ``entities(key, type, surface, df)``,
  ``mentions(key, type, chunk_id, doc_id, pos)`` and ``mention_docs(doc_id, chunks)``.
- ``Neo4jGraphStore`` (``NEO4J_URI`` set; ``core.retrieval.graph_neo4j``): ``(:Chunk {id, doc_id})-[:MENTIONS {pos}]->
  (:Entity {key, type, surface})``; each call is its own Neo4j transaction, and ``replace_doc``
  is idempotent per document (call it after the SQLite commit).

The corpus chooses between them (``core.retrieval.corpus.open_graph_store``).

Scoring (both backends; ``plan_search`` and ``GraphStore.search``):

- ``N`` = chunks with at least one mention, ``df(e)`` = chunks mentioning ``e``,
  ``idf(e) = ln(1 + N / df(e))``.
- Known query entities ``Q`` = the distinct query entities with ``df > 0``; unknown ones
  contribute nothing and if none is known the result is ``[]``.
- Neighbours of ``q`` in ``Q``: entities ``n`` that are not query entities, co-occur with ``q``
  in at least ``MIN_COOCCURRENCE`` (2) chunks and in at least ``NEIGHBOUR_MIN_SHARE`` (20 %) of
  the chunks of ``n`` (a ubiquitous entity is nobody's neighbour); the ``MAX_NEIGHBOURS`` (10)
  with the most co-occurrences. A ``q`` mentioned in more than ``NEIGHBOUR_SOURCE_MAX_DF``
  (1000) chunks gets no neighbours (too common to say anything, and costly).
- ``credit_q(c) = idf(q)`` if chunk ``c`` mentions ``q``, else ``NEIGHBOUR_CREDIT`` (0.5) x
  ``idf(q)`` if it mentions a neighbour of ``q``, else 0.
- ``score(c) = sum_q credit_q(c) / sum_q idf(q)`` in (0, 1]: 1.0 = mentions every known query
  entity. Best first; ties by chunk id.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from core.errors import IndexStateError
from core.text.entities import Entity

MIN_COOCCURRENCE = 2
NEIGHBOUR_MIN_SHARE = 0.2
MAX_NEIGHBOURS = 10
NEIGHBOUR_SOURCE_MAX_DF = 1000
NEIGHBOUR_CREDIT = 0.5

EntityKey = tuple[str, str]  # (key, type)


@runtime_checkable
class GraphStore(Protocol):
    def replace_doc(self, doc_id: str, chunk_entities: Mapping[str, Sequence[Entity]]) -> None:
        """Remove the document's previous mentions and store ``chunk_id -> entities``."""

    def remove_doc(self, doc_id: str) -> None: ...

    def search(
        self, entities: Sequence[Entity], k: int, allowed_chunk_ids: Collection[str] | None = None
    ) -> list[tuple[str, float]]:
        """(chunk_id, score in [0, 1]) best first; see the module docstring for the score."""

    def entity_count(self) -> int: ...

    def mention_count(self) -> int: ...

    def entities_for_chunk(self, chunk_id: str) -> list[Entity]: ...

    def close(self) -> None: ...


# --- scoring (pure) -----------------------------------------------------------------------
@dataclass(frozen=True)
class Credit:
    """A chunk mentioning (key, type) earns ``credit`` for query slot ``slot`` (max per slot)."""

    key: str
    type: str
    slot: int
    credit: float


@dataclass(frozen=True)
class Cooccurrence:
    source: EntityKey  # the query entity
    neighbour: EntityKey
    count: int  # chunks mentioning both
    df: int  # chunks mentioning the neighbour


def idf(n_chunks: int, df: int) -> float:
    return math.log(1.0 + n_chunks / df)


def query_keys(entities: Iterable[Entity]) -> list[EntityKey]:
    """Distinct (key, type) of the query entities, in order."""
    return list(dict.fromkeys((e.key, e.type) for e in entities))


def select_neighbours(
    rows: Iterable[Cooccurrence], exclude: Collection[EntityKey]
) -> dict[EntityKey, list[EntityKey]]:
    """Neighbours per query entity by the module's rule (rows may hold any candidates)."""
    by_source: dict[EntityKey, list[Cooccurrence]] = {}
    for row in rows:
        if (
            row.neighbour not in exclude
            and row.count >= MIN_COOCCURRENCE
            and row.count >= NEIGHBOUR_MIN_SHARE * row.df
        ):
            by_source.setdefault(row.source, []).append(row)
    return {
        source: [r.neighbour for r in sorted(found, key=lambda r: (-r.count, r.neighbour))][
            :MAX_NEIGHBOURS
        ]
        for source, found in by_source.items()
    }


def plan_search(
    known: Sequence[EntityKey],
    df: Mapping[EntityKey, int],
    n_chunks: int,
    neighbours: Mapping[EntityKey, Sequence[EntityKey]],
) -> tuple[list[Credit], float]:
    """The credits to sum per chunk and the normaliser (sum of idf of the known entities)."""
    credits: list[Credit] = []
    total = 0.0
    for slot, q in enumerate(known):
        weight = idf(n_chunks, df[q])
        total += weight
        credits.append(Credit(q[0], q[1], slot, weight))
        for n in neighbours.get(q, ()):
            credits.append(Credit(n[0], n[1], slot, NEIGHBOUR_CREDIT * weight))
    return credits, total


def mention_rows(chunk_entities: Mapping[str, Sequence[Entity]]) -> list[dict[str, Any]]:
    """``[{chunk_id, entities: [{key, type, surface, pos}]}]``, distinct per chunk, non-empty."""
    rows = []
    for chunk_id, entities in chunk_entities.items():
        if not isinstance(chunk_id, str) or not chunk_id:
            raise TypeError(f"chunk ids must be non-empty strings, got {chunk_id!r}")
        seen: dict[EntityKey, dict[str, Any]] = {}
        for e in entities:
            if not isinstance(e, Entity):
                raise TypeError(f"expected Entity, got {type(e).__name__}")
            if (e.key, e.type) not in seen:
                seen[(e.key, e.type)] = {
                    "key": e.key,
                    "type": e.type,
                    "surface": e.surface,
                    "pos": len(seen),
                }
        if seen:
            rows.append({"chunk_id": chunk_id, "entities": list(seen.values())})
    return rows


class ScoredGraphStore:
    """``search`` for both backends; subclasses provide the three reads."""

    def _stats(self, query: list[EntityKey]) -> tuple[int, dict[EntityKey, int]]:
        raise NotImplementedError

    def _cooccurring(self, sources: list[EntityKey]) -> list[Cooccurrence]:
        raise NotImplementedError

    def _sums(
        self, credits: list[Credit], k: int, allowed: list[str] | None
    ) -> list[tuple[str, float]]:
        raise NotImplementedError

    def search(
        self, entities: Sequence[Entity], k: int, allowed_chunk_ids: Collection[str] | None = None
    ) -> list[tuple[str, float]]:
        query = query_keys(entities)
        allowed = None if allowed_chunk_ids is None else sorted(set(allowed_chunk_ids))
        if not query or k <= 0 or allowed == []:
            return []
        n_chunks, df = self._stats(query)
        known = [q for q in query if df.get(q, 0) > 0]
        if not known:
            return []
        sources = [q for q in known if df[q] <= NEIGHBOUR_SOURCE_MAX_DF]
        rows = self._cooccurring(sources) if sources else []
        neighbours = select_neighbours(rows, exclude=set(query))
        credits, total = plan_search(known, df, n_chunks, neighbours)
        return [(cid, min(1.0, s / total)) for cid, s in self._sums(credits, k, allowed)]


# --- SQLite -------------------------------------------------------------------------------
_SQLITE_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS entities (
        key TEXT NOT NULL, type TEXT NOT NULL, surface TEXT NOT NULL,
        df INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (key, type)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS mentions (
        key TEXT NOT NULL, type TEXT NOT NULL, chunk_id TEXT NOT NULL, doc_id TEXT NOT NULL,
        pos INTEGER NOT NULL, PRIMARY KEY (key, type, chunk_id)) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS mentions_chunk ON mentions (chunk_id, pos)",
    "CREATE INDEX IF NOT EXISTS mentions_doc ON mentions (doc_id)",
    """CREATE TABLE IF NOT EXISTS mention_docs (
        doc_id TEXT PRIMARY KEY, chunks INTEGER NOT NULL) WITHOUT ROWID""",
)
_JSON_PAIRS = "SELECT json_extract(value, '$[0]') AS key, json_extract(value, '$[1]') AS type FROM json_each(?)"
_SQL_COOCCURRING = f"""
WITH src AS ({_JSON_PAIRS})
SELECT s.key, s.type, n.key, n.type, COUNT(*) AS cooc, e.df
FROM src AS s
CROSS JOIN mentions AS m ON m.key = s.key AND m.type = s.type
CROSS JOIN mentions AS n ON n.chunk_id = m.chunk_id
JOIN entities AS e ON e.key = n.key AND e.type = n.type
WHERE NOT (n.key = s.key AND n.type = s.type)
GROUP BY s.key, s.type, n.key, n.type
HAVING COUNT(*) >= ? AND COUNT(*) >= ? * e.df
"""
_SQL_SUMS = """
WITH w AS (
    SELECT json_extract(value, '$[0]') AS key, json_extract(value, '$[1]') AS type,
           json_extract(value, '$[2]') AS slot, json_extract(value, '$[3]') AS credit
    FROM json_each(?)),
per_slot AS (
    SELECT m.chunk_id AS chunk_id, MAX(w.credit) AS credit
    FROM w CROSS JOIN mentions AS m ON m.key = w.key AND m.type = w.type
    {where}
    GROUP BY m.chunk_id, w.slot)
SELECT chunk_id, SUM(credit) AS score FROM per_slot
GROUP BY chunk_id ORDER BY ROUND(score, 9) DESC, chunk_id LIMIT ?
"""


def _missing_table(exc: sqlite3.OperationalError) -> bool:
    return "no such table" in str(exc)


class SQLiteGraphStore(ScoredGraphStore):
    """Mentions in the caller's SQLite database; never begins, commits or rolls back."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        reader: Callable[[], sqlite3.Connection] | None = None,
    ) -> None:
        """``reader``: where reads go (the chunk store's snapshot of the calling thread);
        writes always go to ``conn``."""
        self.conn = conn
        self._reader = reader or (lambda: self.conn)
        self._lock = threading.RLock()
        self._ensure_schema()

    def _ensure_schema(self) -> None:
        # individual statements: executescript() would COMMIT the caller's transaction
        for statement in _SQLITE_SCHEMA:
            self.conn.execute(statement)

    # --- writes (inside the caller's transaction) -----------------------------------------
    def replace_doc(self, doc_id: str, chunk_entities: Mapping[str, Sequence[Entity]]) -> None:
        rows = mention_rows(chunk_entities)
        with self._lock:
            self._ensure_schema()
            clash = self.conn.execute(
                "SELECT chunk_id, doc_id FROM mentions WHERE chunk_id IN "
                "(SELECT value FROM json_each(?)) AND doc_id <> ? LIMIT 1",
                (json.dumps([r["chunk_id"] for r in rows]), doc_id),
            ).fetchone()
            if clash is not None:
                raise IndexStateError(
                    "グラフ索引が不整合です: 同じチャンクIDが別の文書に登録されています。",
                    detail=f"chunk {clash[0]!r} belongs to {clash[1]!r}, not {doc_id!r}",
                )
            delta = self._delete_mentions(doc_id)
            surfaces: dict[EntityKey, str] = {}
            for r in rows:
                for e in r["entities"]:
                    ident = (e["key"], e["type"])
                    surfaces.setdefault(ident, e["surface"])
                    delta[ident] = delta.get(ident, 0) + 1
            self.conn.executemany(
                "INSERT OR IGNORE INTO entities (key, type, surface, df) VALUES (?, ?, ?, 0)",
                [(key, typ, surface) for (key, typ), surface in surfaces.items()],
            )
            self.conn.executemany(
                "INSERT INTO mentions (key, type, chunk_id, doc_id, pos) VALUES (?, ?, ?, ?, ?)",
                [
                    (e["key"], e["type"], r["chunk_id"], doc_id, e["pos"])
                    for r in rows
                    for e in r["entities"]
                ],
            )
            if rows:
                self.conn.execute(
                    "INSERT OR REPLACE INTO mention_docs (doc_id, chunks) VALUES (?, ?)",
                    (doc_id, len(rows)),
                )
            self._apply_df(delta)

    def remove_doc(self, doc_id: str) -> None:
        with self._lock:
            self._ensure_schema()
            self._apply_df(self._delete_mentions(doc_id))

    def _delete_mentions(self, doc_id: str) -> dict[EntityKey, int]:
        """Delete the document's mentions; returns -(chunks per entity) as a df delta."""
        delta = {
            (key, typ): -count
            for key, typ, count in self.conn.execute(
                "SELECT key, type, COUNT(*) FROM mentions WHERE doc_id = ? GROUP BY key, type",
                (doc_id,),
            )
        }
        self.conn.execute("DELETE FROM mentions WHERE doc_id = ?", (doc_id,))
        self.conn.execute("DELETE FROM mention_docs WHERE doc_id = ?", (doc_id,))
        return delta

    def _apply_df(self, delta: dict[EntityKey, int]) -> None:
        """df is maintained incrementally (a recount of a common entity would scan its range)."""
        changed = sorted((d, key, typ) for (key, typ), d in delta.items() if d)
        self.conn.executemany("UPDATE entities SET df = df + ? WHERE key = ? AND type = ?", changed)
        self.conn.executemany(
            "DELETE FROM entities WHERE key = ? AND type = ? AND df <= 0",
            [(key, typ) for d, key, typ in changed if d < 0],
        )

    # --- reads ----------------------------------------------------------------------------
    def _stats(self, query: list[EntityKey]) -> tuple[int, dict[EntityKey, int]]:
        n_chunks = (
            self._reader().execute("SELECT COALESCE(SUM(chunks), 0) FROM mention_docs").fetchone()
        )
        rows = self._reader().execute(
            f"SELECT e.key, e.type, e.df FROM ({_JSON_PAIRS}) AS q "
            "JOIN entities AS e ON e.key = q.key AND e.type = q.type",
            (json.dumps(query),),
        )
        return int(n_chunks[0]), {(key, typ): df for key, typ, df in rows}

    def _cooccurring(self, sources: list[EntityKey]) -> list[Cooccurrence]:
        rows = self._reader().execute(
            _SQL_COOCCURRING, (json.dumps(sources), MIN_COOCCURRENCE, NEIGHBOUR_MIN_SHARE)
        )
        return [Cooccurrence((sk, st), (nk, nt), c, df) for sk, st, nk, nt, c, df in rows]

    def _sums(
        self, credits: list[Credit], k: int, allowed: list[str] | None
    ) -> list[tuple[str, float]]:
        payload = json.dumps([[c.key, c.type, c.slot, c.credit] for c in credits])
        if allowed is None:
            sql, params = _SQL_SUMS.format(where=""), (payload, k)
        else:
            where = "WHERE m.chunk_id IN (SELECT value FROM json_each(?))"
            sql, params = _SQL_SUMS.format(where=where), (payload, json.dumps(allowed), k)
        return [(cid, float(score)) for cid, score in self._reader().execute(sql, params)]

    def search(
        self, entities: Sequence[Entity], k: int, allowed_chunk_ids: Collection[str] | None = None
    ) -> list[tuple[str, float]]:
        with self._lock:
            try:
                return super().search(entities, k, allowed_chunk_ids)
            except sqlite3.OperationalError as exc:
                if _missing_table(exc):  # the caller rolled back the transaction that made them
                    return []
                raise

    def _count(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        with self._lock:
            try:
                return int(self._reader().execute(sql, params).fetchone()[0])
            except sqlite3.OperationalError as exc:
                if _missing_table(exc):
                    return 0
                raise

    def entity_count(self) -> int:
        return self._count("SELECT COUNT(*) FROM entities")

    def mention_count(self) -> int:
        return self._count("SELECT COUNT(*) FROM mentions")

    def entities_for_chunk(self, chunk_id: str) -> list[Entity]:
        with self._lock:
            try:
                rows = (
                    self._reader()
                    .execute(
                        "SELECT m.key, m.type, e.surface FROM mentions AS m JOIN entities AS e "
                        "ON e.key = m.key AND e.type = m.type WHERE m.chunk_id = ? ORDER BY m.pos",
                        (chunk_id,),
                    )
                    .fetchall()
                )
            except sqlite3.OperationalError as exc:
                if _missing_table(exc):
                    return []
                raise
        return [Entity(key, typ, surface) for key, typ, surface in rows]

    def close(self) -> None:
        """The connection belongs to the caller: nothing to close."""


__all__ = [
    "Credit",
    "GraphStore",
    "SQLiteGraphStore",
    "plan_search",
    "select_neighbours",
]
