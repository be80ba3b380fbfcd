"""The searcher over the indexed sample runbooks: strategies, fusion modes, filters, contract."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.errors import ContractError
from core.retrieval.langchain_adapter import WorkbenchRetriever
from core.retrieval.searcher import Searcher, find_offsets
from core.retrieval.searcher import make_query as searcher_query
from core.runbooks import runbook_corpus, search_runbooks
from core.schemas.search import SearchQuery, SearchResult, validate_contract


def make_query(text: str, **options) -> SearchQuery:
    limit = options.pop("limit", 5)
    rerank = options.pop("rerankEnabled", False)
    return searcher_query(text, limit=limit, rerank=rerank, **options)


@pytest.fixture
def searcher(sample_settings) -> Searcher:
    return Searcher(runbook_corpus(sample_settings))


@pytest.mark.parametrize(
    ("question", "expected_file"),
    [
        ("VPN に接続できないときの確認手順", "vpn-login-failure.md"),
        ("フィッシングメールが報告されたらどうする", "phishing-report.md"),
        ("ランサムウェアに感染した端末の隔離", "ransomware-isolation.md"),
        ("ADアカウントがロックアウトされた", "ad-account-lockout.md"),
    ],
)
def test_hybrid_search_finds_the_right_runbook(searcher, question, expected_file):
    outcome = searcher.run(
        make_query(question, weights={"keyword": 0.4, "semantic": 0.6, "graph": 0.0})
    )
    assert outcome.hits, question
    assert outcome.hits[0].chunk.source == expected_file


def test_each_strategy_alone_and_metrics(searcher):
    for strategy in ("keyword", "semantic", "graph"):
        result = searcher.search(make_query("EDR で端末を隔離する手順", strategies=[strategy]))
        metrics = result.strategies.model_dump()
        assert metrics[strategy]["enabled"] is True
        others = [s for s in ("keyword", "semantic", "graph") if s != strategy]
        assert all(metrics[o]["enabled"] is False for o in others)
        if strategy != "graph":
            assert result.results, strategy
    hybrid = searcher.search(make_query("EDR で端末を隔離する手順"))
    m = hybrid.strategies
    assert m.keyword.enabled and m.semantic.enabled and m.graph.enabled
    # every strategy is asked for the candidate floor (50) before fusion, with no threshold
    corpus_chunks = runbook_corpus(searcher.corpus.settings).stats()["chunks"]
    assert m.semantic.result_count == min(50, corpus_chunks)
    assert hybrid.total_count >= m.semantic.result_count


def test_rrf_and_weighted_fusion_both_rank_the_vpn_runbook_first(searcher):
    q = make_query("VPN 証明書 期限切れ", weights={"keyword": 0.5, "semantic": 0.5, "graph": 0.0})
    weighted = searcher.run(q, fusion="weighted")
    rrf = searcher.run(q, fusion="rrf")
    assert weighted.hits[0].chunk.source == rrf.hits[0].chunk.source == "vpn-login-failure.md"
    assert [h.combined for h in rrf.hits] == sorted((h.combined for h in rrf.hits), reverse=True)
    assert weighted.hits[0].combined > 0.5


def test_result_is_the_contract_and_round_trips(searcher):
    result = searcher.search(make_query("証跡保全 ログ"))
    payload = result.model_dump(mode="json", by_alias=True)
    assert {"query", "results", "totalCount", "processingTime", "strategies"} <= set(payload)
    item = payload["results"][0]
    assert {"id", "type", "score", "relevance", "content", "highlights", "sources"} <= set(item)
    assert item["sources"]["chunkId"] == item["id"]
    again = validate_contract(SearchResult, payload)
    assert again.results[0].id == result.results[0].id


def test_highlights_and_context(searcher):
    outcome = searcher.run(make_query("FortiGate のログを確認"))
    corpus = searcher.corpus
    for item, hit in zip(outcome.result.results, outcome.hits, strict=True):
        text = item.content.text
        for hl in item.highlights:
            for off in hl.offsets:
                assert text[off.start : off.end].lower() in {t.lower() for t in outcome.terms}
        doc = corpus.store.document(hit.chunk.doc_id)
        if item.content.context_before:
            assert doc.text[: hit.chunk.start].endswith(item.content.context_before)
        if item.content.context_after:
            assert doc.text[hit.chunk.end :].startswith(item.content.context_after)
    assert any(item.highlights for item in outcome.result.results)


def test_filters_file_ids_dates_min_relevance(searcher):
    only = searcher.search(make_query("隔離", filters={"fileIds": ["edr-isolation-release.md"]}))
    assert only.results and {r.sources.file_id for r in only.results} == {
        "edr-isolation-release.md"
    }
    future = (datetime.now(tz=UTC) + timedelta(days=1)).isoformat()
    none = searcher.search(
        make_query("隔離", filters={"dateRange": {"start": future, "end": None}})
    )
    assert none.results == [] and none.total_count == 0
    past = searcher.search(
        make_query("隔離", filters={"dateRange": {"start": None, "end": future}})
    )
    assert past.results
    strict = searcher.search(make_query("隔離", filters={"minRelevance": 0.9}))
    loose = searcher.search(make_query("隔離", filters={"minRelevance": 0.0}))
    assert all(r.relevance.combined >= 0.9 for r in strict.results)
    assert strict.total_count < loose.total_count


def test_offset_and_limit_page_through_the_same_order(searcher):
    full = searcher.search(make_query("手順 確認", limit=10))
    page2 = searcher.search(make_query("手順 確認", limit=5, offset=5))
    assert [r.id for r in page2.results] == [r.id for r in full.results[5:10]]


def test_rerank_falls_back_to_fused_order_without_a_model(searcher):
    plain = searcher.run(make_query("DDoS 攻撃の緩和"))
    asked = searcher.run(make_query("DDoS 攻撃の緩和", rerankEnabled=True))
    assert asked.rerank_used is False and asked.rerank_fallback
    assert [h.chunk.chunk_id for h in asked.hits] == [h.chunk.chunk_id for h in plain.hits]


def test_invalid_query_gets_japanese_message_and_no_search(searcher, monkeypatch):
    with pytest.raises(ContractError) as info:
        make_query("VPN", weights={"keyword": 0.5, "semantic": 0.6, "graph": 0.0})
    assert "検索重みの合計は1.0である必要があります" in info.value.user_message
    with pytest.raises(ContractError, match="1文字以上"):
        make_query("")


def test_langchain_retriever(searcher):
    retriever = WorkbenchRetriever(searcher=searcher, k=3)
    docs = retriever.invoke("フィッシングメールの報告を受けたら")
    assert len(docs) == 3
    assert docs[0].metadata["file"] == "phishing-report.md"
    assert {"bm25_score", "vector_score", "score", "chunk_id", "doc_hash"} <= set(docs[0].metadata)


def test_search_runbooks_pipeline(sample_settings):
    outcome = search_runbooks(sample_settings, "DDoS", limit=3)
    assert len(outcome.hits) <= 3 and outcome.hits[0].chunk.source == "ddos-response.md"


def test_find_offsets():
    assert find_offsets("VPN と vpn と VPN接続", ["vpn", "VPN接続"]) == [(0, 3), (6, 9), (12, 17)]
    assert find_offsets("abc", []) == []


def test_find_offsets_matches_english_words_by_stem():
    text = "Isolating the host: isolate it, then read the catalog and the logs."
    marked = [text[s:e] for s, e in find_offsets(text, ["isolate", "log"])]
    assert marked == ["Isolating", "isolate", "logs"]  # whole words; not the "log" of catalog
    # identifiers and Japanese terms still match as written, the longest occurrence winning
    text = "Get-ADUser で確認し、EDRの隔離とget を使う"
    marked = [text[s:e] for s, e in find_offsets(text, ["Get-ADUser", "get", "EDR", "隔離"])]
    assert marked == ["Get-ADUser", "EDR", "隔離", "get"]


def test_english_query_highlights_inflected_words_in_an_english_corpus(settings, runbook_dir):
    from core.ingest.indexer import update_corpus
    from core.retrieval.corpus import open_corpus, runbook_spec

    (runbook_dir / "ransomware.md").write_text(
        "# Ransomware\n\n## Containment\n"
        "1. Isolating the infected hosts comes first.\n"
        "2. Preserve memory before anyone reboots the machines.\n",
        encoding="utf-8",
    )
    corpus = open_corpus(runbook_spec(settings, runbook_dir), settings)
    update_corpus(corpus, runbook_dir)
    result = Searcher(corpus).search(make_query("How do I isolate an infected host?"))
    item = result.results[0]
    # the offsets point into the chunk body, which the item's text ends with
    body = corpus.store.chunks_by_id([item.id])[item.id].chunk.body
    assert item.content.text.endswith(body)
    marked = {body[o.start : o.end] for o in item.highlights[0].offsets}
    assert marked == {"Isolating", "infected", "hosts"}
