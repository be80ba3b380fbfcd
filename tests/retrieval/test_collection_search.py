"""Runbook collections enforced in the engine: search, ask, sections and the audit record.

Three tiny runbooks (``tests/support/collections_fixture.py``): one public, one for ``net-team``,
one for ``mal-team``. ``alice`` (net-team) must never get anything of the malware runbook, and a
question only it answers must get exactly the reply a corpus without it gives.
"""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from core import guardrails
from core.access import LOCAL, Principal
from core.audit import log_path
from core.ingest.indexer import _chunk_params
from core.runbook_chat import ChatConfig, ask, open_section
from core.runbooks import index_runbooks, runbook_corpus, search_runbooks
from tests.conftest import make_settings
from tests.support.collections_fixture import (
    ALICE,
    BOB,
    HIDDEN_FILE,
    HIDDEN_MARKER,
    HIDDEN_QUESTION,
    NETWORK_QUESTION,
    write_runbooks,
)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    root = tmp_path_factory.mktemp("collections")
    settings = make_settings(root / "state", write_runbooks(root / "runbooks"))
    index_runbooks(settings, None)
    return settings


@pytest.fixture(scope="module")
def without_hidden(tmp_path_factory, indexed):
    """The same runbooks without the malware collection, indexed in the same state folder."""
    root = tmp_path_factory.mktemp("collections-absent")
    folder = write_runbooks(root / "runbooks", skip_hidden=True)
    index_runbooks(indexed, folder, check_allowed=False)
    return folder


def _shown(outcome) -> str:
    """Everything the search returns but the query it echoes."""
    data = outcome.result.model_dump(mode="json", by_alias=True)
    data.pop("query")
    return json.dumps(data, ensure_ascii=False)


def test_every_chunk_carries_its_collection(indexed):
    chunks = list(runbook_corpus(indexed).store.iter_chunks())
    by_file = {sc.chunk.source: sc.chunk.collection for sc in chunks}
    assert by_file == {
        "password-reset.md": "default",
        "network/vpn-troubleshooting.md": "network",
        HIDDEN_FILE: "malware",
    }
    metadatas = runbook_corpus(indexed).vectors._col.get(include=["metadatas"])["metadatas"]
    assert {m["collection"] for m in metadatas} == {"default", "network", "malware"}


def test_local_sees_every_collection(indexed):
    outcome = search_runbooks(indexed, HIDDEN_QUESTION, limit=5)
    assert outcome.hits[0].chunk.source == HIDDEN_FILE


def test_a_hidden_collection_is_never_a_candidate(indexed):
    visible = sum(
        1
        for sc in runbook_corpus(indexed).store.iter_chunks()
        if sc.chunk.collection in ("default", "network")
    )
    for weights in (None, {"keyword": 1.0, "semantic": 0.0, "graph": 0.0},
                    {"keyword": 0.0, "semantic": 1.0, "graph": 0.0},
                    {"keyword": 0.3, "semantic": 0.3, "graph": 0.4}):  # fmt: skip
        outcome = search_runbooks(indexed, f"{HIDDEN_QUESTION} {HIDDEN_MARKER}", limit=10, weights=weights, principal=ALICE)  # fmt: skip
        files = {h.chunk.source for h in outcome.hits}
        assert files and files <= {"password-reset.md", "network/vpn-troubleshooting.md"}
        assert outcome.result.total_count == len(outcome.hits)
        strategies = outcome.result.strategies
        for metric in (strategies.keyword, strategies.semantic, strategies.graph):
            assert metric.result_count <= visible  # only visible chunks were ranked
        shown = _shown(outcome)
        assert (
            HIDDEN_MARKER not in shown
            and "malware" not in shown
            and "ランサムウェア感染" not in shown
        )


def test_each_group_sees_its_own_collection(indexed):
    bob = search_runbooks(indexed, HIDDEN_QUESTION, limit=5, principal=BOB)
    assert bob.hits[0].chunk.source == HIDDEN_FILE
    assert "network/vpn-troubleshooting.md" not in {h.chunk.source for h in bob.hits}
    alice = search_runbooks(indexed, NETWORK_QUESTION, limit=5, principal=ALICE)
    assert alice.hits[0].chunk.source == "network/vpn-troubleshooting.md"
    nobody = Principal(
        subject="c", name="carol", groups=("other",), signed_in=True, role="operator"
    )
    files = {
        h.chunk.source for h in search_runbooks(indexed, NETWORK_QUESTION, principal=nobody).hits
    }
    assert files == {"password-reset.md"}  # the default collection is public
    admin = Principal(subject="d", name="dave", groups=(), signed_in=True, role="admin")
    assert (
        search_runbooks(indexed, HIDDEN_QUESTION, principal=admin).hits[0].chunk.source
        == HIDDEN_FILE
    )


def test_a_question_about_a_hidden_runbook_gets_the_ordinary_refusal(indexed, without_hidden):
    local = ask(HIDDEN_QUESTION, [], ChatConfig(session_id="t"), indexed)
    assert not local.flags.insufficient_evidence
    assert any(c.file == HIDDEN_FILE for c in local.citations if c.cited)

    alice = ask(HIDDEN_QUESTION, [], ChatConfig(session_id="t", principal=ALICE), indexed)
    assert alice.flags.insufficient_evidence
    assert alice.answer == guardrails.INSUFFICIENT_EVIDENCE_TEMPLATE
    dumped = json.dumps(alice.model_dump(mode="json"), ensure_ascii=False)
    assert HIDDEN_MARKER not in dumped and "malware" not in dumped

    # exactly what a corpus that never had the hidden runbook answers: text, flags, sources, scores
    absent = ask(HIDDEN_QUESTION, [], ChatConfig(session_id="t", data=without_hidden), indexed)
    assert alice.answer == absent.answer
    assert alice.flags == absent.flags
    assert alice.evidence == absent.evidence
    strip = lambda a: [c.model_dump(exclude={"updated_at"}) for c in a.citations]  # noqa: E731
    assert strip(alice) == strip(absent)


def test_the_audit_record_of_a_restricted_user_holds_nothing_hidden(indexed):
    ask(
        HIDDEN_QUESTION + "（監査）",
        [],
        ChatConfig(session_id="audit-alice", principal=ALICE),
        indexed,
    )
    path = log_path(indexed.logs_dir, datetime.now().astimezone().date())
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    mine = [r for r in lines if r.get("session_id") == "audit-alice"]
    assert len(mine) == 1 and mine[0]["search_results"]
    assert HIDDEN_MARKER not in json.dumps(mine, ensure_ascii=False)
    assert all(not r["file"].startswith("malware/") for r in mine[0]["search_results"])


def test_a_hidden_section_reads_as_unknown(indexed):
    chunk = next(
        sc.chunk
        for sc in runbook_corpus(indexed).store.iter_chunks()
        if sc.chunk.source == HIDDEN_FILE
    )
    args = (indexed, None, chunk.chunk_id, chunk.source, chunk.doc_hash)
    assert HIDDEN_MARKER in (open_section(*args).text or "")
    hidden = open_section(*args, principal=ALICE)
    assert hidden.text is None and hidden.removed
    # a visible file name does not unlock a hidden chunk id
    crafted = open_section(indexed, None, chunk.chunk_id, "password-reset.md", chunk.doc_hash, principal=ALICE)  # fmt: skip
    assert crafted.text is None
    assert HIDDEN_MARKER in (open_section(*args, principal=BOB).text or "")


def test_an_index_without_collections_is_rebuilt(indexed, tmp_path):
    settings = make_settings(tmp_path / "state", write_runbooks(tmp_path / "runbooks"))
    index_runbooks(settings, None)
    corpus = runbook_corpus(settings)
    params = corpus.store.get_meta("chunk_params")
    assert params == _chunk_params(corpus) and "/m1" in params
    corpus.store.set_meta("chunk_params", params.replace("/m1", ""))  # as built before collections
    report = index_runbooks(settings, None)
    assert len(report.updated) == 3 and corpus.store.get_meta("chunk_params") == params


def test_restricted_search_of_an_old_index_fails_closed(indexed, tmp_path):
    settings = make_settings(tmp_path / "state", write_runbooks(tmp_path / "runbooks"))
    index_runbooks(settings, None)
    corpus = runbook_corpus(settings)
    corpus.store.conn.execute("UPDATE chunks SET extra='{}'")  # chunks without a collection
    corpus.store.set_meta("generation", str(corpus.store.generation + 1))
    assert search_runbooks(settings, NETWORK_QUESTION, principal=ALICE).hits == []
    assert search_runbooks(settings, NETWORK_QUESTION, principal=LOCAL).hits


def test_interview_evidence_searches_as_the_principal(indexed):
    from core.interview.evidence import RunbookEvidence

    assert any(e.source == HIDDEN_FILE for e in RunbookEvidence(indexed).search(HIDDEN_QUESTION, 5))
    found = RunbookEvidence(indexed, principal=ALICE).search(HIDDEN_QUESTION, 5)
    assert all(not e.source.startswith("malware/") and HIDDEN_MARKER not in e.text for e in found)


def test_the_langchain_retriever_takes_the_collections(indexed):
    from core.retrieval.langchain_adapter import WorkbenchRetriever
    from core.retrieval.searcher import Searcher
    from core.runbooks import visible_collections

    searcher = Searcher(runbook_corpus(indexed))
    allowed = visible_collections(indexed, None, ALICE)
    docs = WorkbenchRetriever(searcher=searcher, k=5, collections=allowed).invoke(HIDDEN_QUESTION)
    assert docs and {d.metadata["collection"] for d in docs} <= {"default", "network"}
    everything = WorkbenchRetriever(searcher=searcher, k=5).invoke(HIDDEN_QUESTION)
    assert everything[0].metadata["file"] == HIDDEN_FILE


def test_index_counts_are_those_of_the_visible_collections(indexed):
    from core.runbooks import runbook_stats
    from core.status import workbench_status

    assert runbook_stats(indexed, None)["documents"] == 3
    assert runbook_stats(indexed, None, ALICE)["documents"] == 2
    runbooks = workbench_status(indexed).indexes[0]
    assert (runbooks.documents, runbooks.built) == (3, True)
    mine = workbench_status(indexed, ALICE).indexes[0]
    assert mine.documents == 2 and mine.chunks == runbook_stats(indexed, None, ALICE)["chunks"]


def test_a_restricted_user_cannot_reach_a_collection_by_naming_its_folder(indexed):
    hidden_folder = indexed.runbooks_dir / "malware"
    local = search_runbooks(indexed, HIDDEN_QUESTION, data=hidden_folder)
    assert local.hits and local.hits[0].chunk.collection == "default"  # its own corpus
    assert search_runbooks(indexed, HIDDEN_QUESTION, data=hidden_folder, principal=ALICE).hits == []
    answer = ask(HIDDEN_QUESTION, [], ChatConfig(data=hidden_folder, principal=ALICE), indexed)
    assert answer.flags.insufficient_evidence and HIDDEN_MARKER not in answer.model_dump_json()
    assert search_runbooks(
        indexed, NETWORK_QUESTION, data=indexed.runbooks_dir, principal=ALICE
    ).hits


def test_a_hidden_runbooks_words_are_not_a_restricted_users_vocabulary(indexed):
    """The katakana spellings an English question is matched with come from the runbooks the
    user may see: only the hidden runbook spells "console" and "cable" (コンソール, ケーブル)."""
    question = "Which console or cable is used to cut the endpoint off?"
    everyone = search_runbooks(indexed, question, limit=3).translated
    assert {"コンソール", "ケーブル"} <= set(everyone)
    alice = search_runbooks(indexed, question, limit=3, principal=ALICE).translated
    assert not {"コンソール", "ケーブル"} & set(alice)
