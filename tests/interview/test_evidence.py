"""The search action against a real runbook corpus (two sample runbooks, indexed here)."""

from __future__ import annotations

import pytest

from core.interview.domains import get_domain
from core.interview.evidence import CallableEvidence, Evidence, RunbookEvidence, search_slot
from core.interview.orchestrator import Interviewer
from core.interview.params import VoIParams
from core.runbooks import index_runbooks, runbook_corpus
from tests.conftest import make_settings

RUNBOOK = """# EDR 端末隔離手順

## 前提条件

EDR 管理コンソールの隔離権限を持つ管理者アカウントで、社内 VPN 経由でアクセスすること。

## 切り戻し（ロールバック）

誤って隔離した場合は、EDR コンソールから隔離を解除し、利用者に通信の回復を確認する。

## 注意事項

サーバーを隔離すると業務が停止する。必ずホスト名を確認してから実行すること。
"""


@pytest.fixture(scope="module")
def corpus_settings(tmp_path_factory):
    root = tmp_path_factory.mktemp("evidence")
    (root / "runbooks").mkdir()
    (root / "runbooks" / "edr-isolation.md").write_text(RUNBOOK, encoding="utf-8")
    settings = make_settings(root / "state", root / "runbooks")
    index_runbooks(settings, None, check_allowed=False)
    return settings


def test_search_comes_before_asking_and_fills_with_retrieval(corpus_settings):
    params = VoIParams(max_searches_per_turn=2)  # each search opens the corpus: keep it short
    iv = Interviewer(
        corpus_settings, evidence=RunbookEvidence(corpus_settings), llm=None, params=params
    )
    result = iv.start("sop", "EDR で感染端末を隔離する手順")
    state = result.session
    searched = [v for v in state.voi_trace if v.action == "search"]
    asked = [v for v in state.voi_trace if v.action == "ask"]
    assert searched and asked and searched[0].voi > asked[0].voi
    retrieved = [f for f in state.facts.values() if f.source_kind == "retrieval"]
    assert retrieved, "the corpus should fill at least one slot"
    assert all(f.status == "pending" and "edr-isolation.md >" in f.provenance for f in retrieved)
    assert any(state.slots[f.slot_name].source_kind == "retrieval" for f in retrieved)
    assert all(state.slots[n].search_attempts == 1 for n in {v.slots[0] for v in searched})
    doc = iv.abort(state.session_id).document
    assert "出典:" in doc and "要確認" in doc
    fact = retrieved[0]
    confirmed = iv.confirm_fact(state.session_id, fact.id, "confirmed")
    assert confirmed.facts[fact.id].status == "confirmed"
    iv.close()


def test_unbuilt_corpus_is_a_warning_not_a_build(settings):
    iv = Interviewer(settings, evidence=RunbookEvidence(settings), llm=None)
    result = iv.start("sop", "VPN 装置の設定変更")
    assert result.question and any("未構築" in w for w in result.warnings)
    assert not runbook_corpus(settings).store.manifest()  # nothing was indexed
    iv.close()


def test_failing_searcher_is_a_warning(settings):
    def broken(query, limit):
        raise RuntimeError("index offline")

    source = CallableEvidence("wiki", "Wikipedia", broken)
    spec = get_domain("sop").slot("hazards")
    candidates, warning = search_slot(source, spec, "テーマ")
    assert candidates == [] and "Wikipedia" in warning
    ok = CallableEvidence(
        "wiki",
        "Wikipedia",
        lambda q, k: [
            Evidence(
                "作業前に必ずバックアップを取得すること。誤ると通信が停止する。",
                "wiki:x",
                "注意",
                0.9,
            )
        ],
    )
    iv = Interviewer(settings, evidence=source, params=VoIParams(), llm=None)
    result = iv.start("sop", "VPN 装置の設定変更")
    assert result.question and any("Wikipedia" in w for w in result.warnings)
    iv.close()
    found, _ = search_slot(ok, spec, "テーマ")
    assert found and found[0].source_kind == "retrieval" and found[0].provenance == "wiki:x > 注意"
