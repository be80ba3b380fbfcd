"""Graph store: SQLite backend on a real database file, scoring rule, Neo4j without a server."""

from __future__ import annotations

import math
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import IndexStateError, WorkbenchError
from core.retrieval.corpus import open_graph_store
from core.retrieval.graph import GraphStore, SQLiteGraphStore, mention_rows
from core.retrieval.graph_neo4j import (
    CYPHER_ENTITY_COUNT,
    CYPHER_MENTION_COUNT,
    Neo4jGraphStore,
    cypher_chunk_conflict,
    cypher_cooccurring,
    cypher_delete_doc,
    cypher_doc_entities,
    cypher_entities_for_chunk,
    cypher_prune_entities,
    cypher_schema,
    cypher_stats,
    cypher_sums,
    cypher_write_mentions,
)
from core.text.entities import Entity, extract_entities, extract_query_entities


def ent(key: str, type_: str = "noun") -> Entity:
    return Entity(key, type_, key.upper())


@pytest.fixture
def db(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    # the chunk store's way: autocommit connection, explicit BEGIN/COMMIT by the caller
    conn = sqlite3.connect(tmp_path / "corpus.sqlite", isolation_level=None)
    yield conn
    conn.close()


@pytest.fixture
def store(db: sqlite3.Connection) -> SQLiteGraphStore:
    return SQLiteGraphStore(db)


def write(db: sqlite3.Connection, store: GraphStore, doc_id: str, chunks: dict) -> None:
    db.execute("BEGIN IMMEDIATE")
    store.replace_doc(doc_id, chunks)
    db.execute("COMMIT")


def ids(results: list[tuple[str, float]]) -> list[str]:
    return [cid for cid, _ in results]


# --- writes -------------------------------------------------------------------------------
def test_replace_doc_twice_keeps_only_new_mentions(db, store) -> None:
    write(db, store, "d1", {"d1#0": [ent("a"), ent("b")], "d1#1": [ent("b")]})
    write(db, store, "d2", {"d2#0": [ent("b"), ent("c")]})
    assert (store.entity_count(), store.mention_count()) == (3, 5)

    write(db, store, "d1", {"d1#0": [ent("x")], "d1#5": [ent("b"), ent("x")]})
    assert store.entities_for_chunk("d1#1") == []
    assert [e.key for e in store.entities_for_chunk("d1#5")] == ["b", "x"]
    assert store.entity_count() == 3  # a is gone (no mention left), x is new
    assert store.mention_count() == 5
    assert ids(store.search([ent("a")], 10)) == []
    assert ids(store.search([ent("x")], 10)) == ["d1#0", "d1#5"]
    assert dict(db.execute("SELECT key, df FROM entities")) == {"b": 2, "c": 1, "x": 2}


def test_remove_doc(db, store) -> None:
    write(db, store, "d1", {"d1#0": [ent("a"), ent("b")]})
    write(db, store, "d2", {"d2#0": [ent("b")]})
    db.execute("BEGIN")
    store.remove_doc("d1")
    store.remove_doc("never-indexed")
    db.execute("COMMIT")
    assert (store.entity_count(), store.mention_count()) == (1, 1)
    assert store.search([ent("b")], 10) == [("d2#0", 1.0)]
    assert store.entities_for_chunk("d1#0") == []


def test_duplicates_in_a_chunk_and_same_key_of_two_types(db, store) -> None:
    write(db, store, "d", {"d#0": [ent("ad", "product"), ent("ad", "product"), ent("ad", "host")]})
    assert store.entities_for_chunk("d#0") == [
        Entity("ad", "product", "AD"),
        Entity("ad", "host", "AD"),
    ]
    assert store.mention_count() == 2
    assert store.search([ent("ad", "cve")], 5) == []


def test_chunk_id_of_another_document_is_rejected_and_nothing_changes(db, store) -> None:
    write(db, store, "d1", {"c#0": [ent("a")]})
    db.execute("BEGIN")
    with pytest.raises(IndexStateError) as info:
        store.replace_doc("d2", {"c#0": [ent("b")]})
    db.execute("ROLLBACK")
    assert "チャンクID" in info.value.user_message
    assert store.entities_for_chunk("c#0") == [ent("a")]


def test_bad_input_is_a_type_error(store) -> None:
    with pytest.raises(TypeError):
        store.replace_doc("d", {"d#0": ["not an entity"]})  # type: ignore[list-item]


# --- transactions ---------------------------------------------------------------------------
def test_store_never_commits_and_a_rollback_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "corpus.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    conn.execute("BEGIN IMMEDIATE")
    store = SQLiteGraphStore(conn)  # the schema is created inside the caller's transaction
    store.replace_doc("d1", {"d1#0": [ent("a")]})
    store.remove_doc("d0")
    assert conn.in_transaction
    assert store.mention_count() == 1
    conn.execute("ROLLBACK")
    control = re.compile(r"\s*(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE)\b", re.IGNORECASE)
    assert [s for s in statements if control.match(s)] == ["BEGIN IMMEDIATE", "ROLLBACK"]

    # tables and mentions are gone with the rolled-back transaction; the store copes
    assert (store.entity_count(), store.mention_count()) == (0, 0)
    assert store.search([ent("a")], 5) == []
    assert store.entities_for_chunk("d1#0") == []
    other = sqlite3.connect(path)
    assert other.execute("SELECT name FROM sqlite_master WHERE name = 'mentions'").fetchall() == []

    # the next write recreates the schema
    conn.execute("BEGIN")
    store.replace_doc("d1", {"d1#0": [ent("a")]})
    conn.execute("COMMIT")
    assert other.execute("SELECT chunk_id FROM mentions").fetchall() == [("d1#0",)]
    other.close()
    conn.close()


def test_changes_are_invisible_until_the_caller_commits(tmp_path: Path) -> None:
    path = tmp_path / "corpus.sqlite"
    conn = sqlite3.connect(path)  # default (implicit transactions) connection
    store = SQLiteGraphStore(conn)
    store.replace_doc("d1", {"d1#0": [ent("a")]})
    assert conn.in_transaction
    other = sqlite3.connect(path)
    assert other.execute("SELECT COUNT(*) FROM mentions").fetchone() == (0,)
    conn.commit()
    assert other.execute("SELECT COUNT(*) FROM mentions").fetchone() == (1,)
    other.close()
    conn.close()


# --- scoring --------------------------------------------------------------------------------
def test_idf_scoring_both_outrank_rarer_outrank_common(db, store) -> None:
    # N = 5 chunks; df(common) = 4, df(rare) = 2; no pair co-occurs twice (no neighbours)
    write(
        db,
        store,
        "d",
        {
            "both": [ent("common"), ent("rare")],
            "rare-only": [ent("rare"), ent("x")],
            "common-only": [ent("common"), ent("y")],
            "c2": [ent("common")],
            "c3": [ent("common")],
        },
    )
    idf_common, idf_rare = math.log(1 + 5 / 4), math.log(1 + 5 / 2)
    total = idf_common + idf_rare
    results = store.search([ent("common"), ent("rare"), ent("unknown")], 10)
    assert ids(results) == ["both", "rare-only", "c2", "c3", "common-only"]
    assert results[0][1] == pytest.approx(1.0)
    assert results[1][1] == pytest.approx(idf_rare / total)  # 0.607
    assert results[2][1] == pytest.approx(idf_common / total)  # 0.393
    # unknown query entities contribute nothing, known ones alone score 1.0
    assert store.search([ent("rare"), ent("unknown")], 10) == [("both", 1.0), ("rare-only", 1.0)]
    assert store.search([ent("unknown")], 10) == []
    assert store.search([], 10) == []
    assert ids(store.search([ent("common"), ent("rare")], 2)) == ["both", "rare-only"]


def test_one_hop_neighbours_get_half_credit(db, store) -> None:
    # q and n co-occur in 2 chunks and in 2/3 of n's chunks: n is a neighbour of q.
    # w co-occurs with q in 2 chunks but is in 12 chunks (share 1/6 < 0.2): not a neighbour.
    chunks = {
        "c1": [ent("q"), ent("n"), ent("w")],
        "c2": [ent("q"), ent("n"), ent("w")],
        "c3": [ent("n")],
        "c4": [ent("z")],
        "c5": [ent("q")],
    }
    chunks.update({f"w{i:02d}": [ent("w")] for i in range(10)})
    write(db, store, "d", chunks)
    assert store.search([ent("q")], 20) == [("c1", 1.0), ("c2", 1.0), ("c5", 1.0), ("c3", 0.5)]
    # a neighbour that is itself a query entity scores as a query entity
    n_chunks = 15
    idf_q, idf_n = math.log(1 + n_chunks / 3), math.log(1 + n_chunks / 3)
    results = dict(store.search([ent("q"), ent("n")], 20))
    assert results["c3"] == pytest.approx(idf_n / (idf_q + idf_n))
    assert results["c1"] == pytest.approx(1.0)


def test_allowed_chunk_ids_filter(db, store) -> None:
    write(db, store, "d", {"c1": [ent("a")], "c2": [ent("a")], "c3": [ent("a"), ent("b")]})
    assert ids(store.search([ent("a")], 10, allowed_chunk_ids={"c2", "c3", "other"})) == [
        "c2",
        "c3",
    ]
    assert store.search([ent("a")], 10, allowed_chunk_ids=[]) == []
    assert store.search([ent("a")], 0) == []


def reference_search(
    corpus: dict[str, set[tuple[str, str]]],
    query: list[tuple[str, str]],
    k: int,
    allowed: set[str] | None,
) -> list[tuple[str, float]]:
    """Brute-force implementation of the module docstring's rule."""
    chunks = {c: es for c, es in corpus.items() if es}
    n = len(chunks)
    df: dict[tuple[str, str], int] = {}
    for es in chunks.values():
        for e in es:
            df[e] = df.get(e, 0) + 1
    known = [q for q in dict.fromkeys(query) if df.get(q)]
    if not known or k <= 0:
        return []
    idf = {q: math.log(1 + n / df[q]) for q in known}
    neighbours = {}
    for q in known:
        found = []
        for cand in df:
            if cand in query or df[q] > 1000:
                continue
            cooc = sum(1 for es in chunks.values() if q in es and cand in es)
            if cooc >= 2 and cooc >= 0.2 * df[cand]:
                found.append((-cooc, cand))
        neighbours[q] = {c for _, c in sorted(found)[:10]}
    scores = {}
    for cid, es in chunks.items():
        if allowed is not None and cid not in allowed:
            continue
        s = sum(idf[q] if q in es else (0.5 * idf[q] if es & neighbours[q] else 0.0) for q in known)
        if s > 0:
            scores[cid] = s / sum(idf.values())
    return sorted(scores.items(), key=lambda kv: (-round(kv[1], 9), kv[0]))[:k]


KEYS = [(key, "noun") for key in "abcdef"] + [("a", "host")]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=st.dictionaries(
        st.sampled_from(["d1", "d2", "d3"]),
        st.lists(st.sets(st.sampled_from(KEYS), max_size=4), max_size=6),
        min_size=1,
    ),
    query=st.lists(st.sampled_from([*KEYS, ("zz", "noun")]), max_size=4),
    k=st.integers(0, 8),
    use_filter=st.booleans(),
)
def test_matches_the_reference_rule(docs, query, k, use_filter) -> None:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    store = SQLiteGraphStore(conn)
    corpus = {}
    for doc_id, chunk_sets in docs.items():
        chunks = {f"{doc_id}#{i}": sorted(es) for i, es in enumerate(chunk_sets)}
        store.replace_doc(
            doc_id, {c: [Entity(k_, t, k_) for k_, t in es] for c, es in chunks.items()}
        )
        corpus.update({c: set(es) for c, es in chunks.items()})
    allowed = {c for i, c in enumerate(sorted(corpus)) if i % 2 == 0} if use_filter else None
    got = store.search([Entity(k_, t, k_) for k_, t in query], k, allowed)
    want = reference_search(corpus, query, k, allowed)
    assert ids(got) == ids(want)
    assert [s for _, s in got] == pytest.approx([s for _, s in want])
    assert all(0.0 < s <= 1.0 for _, s in got)
    assert store.mention_count() == sum(len(es) for es in corpus.values())
    conn.close()


def test_end_to_end_with_extracted_entities(db, store) -> None:
    texts = {
        "rb#0": "ランサムウェア感染時は Microsoft Defender for Endpoint で端末を隔離し、証跡保全を行う。",
        "rb#1": "アカウントロックアウト（イベントID 4740）は Get-ADUser で確認する。",
        "rb#2": "fs01.corp.example のファイル共有を Veeam のバックアップから復旧する。",
    }
    write(db, store, "rb", {cid: extract_entities(t) for cid, t in texts.items()})
    question = "イベントID 4740 のロックアウトはどう調べる？"
    assert ids(store.search(extract_query_entities(question), 3)) == ["rb#1"]
    question = "ランサムウェアに感染したらMDEでどうする？"
    assert ids(store.search(extract_query_entities(question), 3))[0] == "rb#0"


# --- Neo4j without a server ---------------------------------------------------------------
def test_unreachable_neo4j_is_a_japanese_index_error(db) -> None:
    start = time.monotonic()
    with pytest.raises(IndexStateError) as info:
        Neo4jGraphStore("bolt://127.0.0.1:1", "neo4j", "secret", connection_timeout=1.0)
    assert isinstance(info.value, WorkbenchError)
    assert "Neo4j" in info.value.user_message and "接続できません" in info.value.user_message
    assert "secret" not in str(info.value)
    with pytest.raises(IndexStateError):
        open_graph_store(db, "bolt://127.0.0.1:1", "neo4j", None)
    assert time.monotonic() - start < 8


def test_factory_without_uri_is_sqlite(db) -> None:
    store = open_graph_store(db, None, "neo4j", None)
    assert isinstance(store, SQLiteGraphStore) and isinstance(store, GraphStore)
    store.close()
    assert db.execute("SELECT 1").fetchone() == (1,)  # close() leaves the caller's connection


CYPHER_READS = [
    cypher_doc_entities(),
    cypher_stats(),
    cypher_cooccurring(),
    cypher_sums(False),
    cypher_sums(True),
    cypher_entities_for_chunk(),
    cypher_chunk_conflict(),
    CYPHER_ENTITY_COUNT,
    CYPHER_MENTION_COUNT,
]
CYPHER_WRITES = [cypher_delete_doc(), cypher_write_mentions(), cypher_prune_entities()]


@pytest.mark.parametrize("query", CYPHER_READS + CYPHER_WRITES + cypher_schema())
def test_cypher_is_balanced_and_parameterized(query: str) -> None:
    for open_, close in ("()", "[]", "{}"):
        assert query.count(open_) == query.count(close)
    assert "'" not in query and '"' not in query  # values travel as $parameters only


@pytest.mark.parametrize("query", CYPHER_READS)
def test_cypher_reads_do_not_write(query: str) -> None:
    assert not re.search(r"\b(MERGE|CREATE|DELETE|SET|REMOVE)\b", query)


def test_cypher_builders() -> None:
    schema = " ".join(cypher_schema())
    assert "REQUIRE c.id IS UNIQUE" in schema
    assert "REQUIRE (e.key, e.type) IS UNIQUE" in schema
    assert schema.count("IF NOT EXISTS") == 3
    write_ = cypher_write_mentions()
    assert "MERGE (c:Chunk {id: row.chunk_id})" in write_
    assert "MERGE (e:Entity {key: ent.key, type: ent.type})" in write_
    assert "MERGE (c)-[r:MENTIONS]->(e)" in write_
    assert "DETACH DELETE" in cypher_delete_doc()
    assert "$allowed" in cypher_sums(True) and "$allowed" not in cypher_sums(False)
    assert set(re.findall(r"\$(\w+)", cypher_sums(True))) == {"credits", "allowed", "k"}
    assert set(re.findall(r"\$(\w+)", cypher_cooccurring())) == {
        "sources",
        "min_cooccurrence",
        "min_share",
    }


def test_mention_rows() -> None:
    rows = mention_rows({"c1": [ent("a"), ent("b"), ent("a")], "c2": []})
    assert rows == [
        {
            "chunk_id": "c1",
            "entities": [
                {"key": "a", "type": "noun", "surface": "A", "pos": 0},
                {"key": "b", "type": "noun", "surface": "B", "pos": 1},
            ],
        }
    ]
