"""In a folder of both languages, a passage in the other script than the question's has its
keyword score scaled by how much less of the question it can match (``language_balance``)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from core.retrieval import searcher
from core.retrieval.keyword import KeywordIndex
from core.retrieval.searcher import language_balance

INDEX = KeywordIndex(
    ["ja1", "ja2", "en1", "en2"],
    [["証拠", "保管", "期間"], ["証拠", "取得"], ["evidence", "retention"], ["vpn", "outage"]],
)


def test_idf_is_bm25s_lucene_idf_of_the_known_tokens():
    idf = INDEX.idf(["証拠", "期間", "unknown", ""])
    assert set(idf) == {"証拠", "期間"}
    assert idf["証拠"] == pytest.approx(math.log(1 + (4 - 2 + 0.5) / (2 + 0.5)))
    assert idf["期間"] == pytest.approx(math.log(1 + (4 - 1 + 0.5) / (1 + 0.5)))
    assert idf["期間"] > idf["証拠"]  # the rarer word weighs more


def test_balance_is_the_share_of_the_question_the_other_script_cannot_match():
    # every word translated: both scripts can match as much
    assert language_balance(INDEX, ["証拠", "期間"], ["evidence", "retention"], "ja") == 1.0
    # one rare word without a translation: English pages can match less of the question
    scale = language_balance(INDEX, ["証拠", "保管", "期間"], ["evidence"], "ja")
    idf = INDEX.idf(["証拠", "保管", "期間", "evidence"])
    expected = (idf["証拠"] + idf["保管"] + idf["期間"]) / idf["evidence"]
    assert scale == pytest.approx(min(searcher.LANGUAGE_BALANCE_CAP, expected))
    assert 1.0 < scale <= searcher.LANGUAGE_BALANCE_CAP
    # nothing the other script could match, or no script: no scaling
    assert language_balance(INDEX, ["証拠"], [], "ja") == 1.0
    assert language_balance(INDEX, ["123"], ["evidence"], "none") == 1.0


# Written for this test: the English runbook answers; the Japanese one is about collecting
# evidence and shares the question's untranslated words.
RUNBOOKS = {
    "evidence-retention.md": """# Evidence Retention

## How long to keep evidence

Retain all evidence gathered during an incident for at least three years after the case is
closed. If legal action is possible, keep it until the legal team confirms the case is over.

## Disposal

When the retention period ends, destroy the media with a certified vendor and record the date
in the case file.
""",
    "evidence-collection-ja.md": """# 証拠保全手順

## 証拠の取得

感染が疑われる端末のメモリとディスクのイメージを取得し、ハッシュ値を記録する。

## 証拠の保管

取得した証拠は施錠できる保管庫に入れ、誰がいつ持ち出したかを保管記録に残す。
""",
    "vpn-ja.md": """# VPN 障害対応手順

## 確認

VPN 装置の CPU 使用率とセッション数を監視画面で確認する。証明書の有効期限も確認する。

## 復旧

待機系の装置に切り替える。証明書が切れていれば更新してサービスを再起動する。
""",
}


def test_an_english_page_is_not_outranked_for_want_of_translations(
    settings, runbook_dir: Path, monkeypatch
):
    from core.runbook_chat import ChatConfig
    from core.runbooks import index_runbooks, search_runbooks

    for name, text in RUNBOOKS.items():
        (runbook_dir / name).write_text(text, encoding="utf-8")
    index_runbooks(settings, runbook_dir, check_allowed=False)
    question = "保管期間が終わった証拠の媒体はどう処分する？"  # 期間, 媒体, 処分: no translation

    w = ChatConfig(session_id="t").bm25_weight  # the runbook chat's weights
    weights = {"keyword": w, "semantic": 1.0 - w, "graph": 0.0}

    def order() -> list[str]:
        hits = search_runbooks(settings, question, data=runbook_dir, limit=4, weights=weights).hits
        return [h.chunk.heading.rsplit(" > ", 1)[-1] for h in hits]

    balanced = order()
    assert balanced.index("How long to keep evidence") < balanced.index("証拠の取得"), balanced
    monkeypatch.setattr(searcher, "LANGUAGE_BALANCE_CAP", 1.0)  # the scores as they were:
    # no keyword balance, and raw cosines on the vector side (core.retrieval.centering)
    monkeypatch.setattr(
        searcher.Searcher, "_centered_ranking", lambda self, ranking, *rest: (ranking, None)
    )
    plain = order()
    assert plain.index("How long to keep evidence") > plain.index("証拠の取得"), plain


def test_a_hit_found_by_keywords_alone_has_its_real_cosine(tmp_path: Path):
    """The evidence grade reads the page's best raw cosine: a hit that was no vector candidate
    has its cosine looked up, not taken as zero."""
    import numpy as np

    from core.runbooks import runbook_corpus, search_runbooks
    from tests.conftest import indexed_runbooks

    # one vector candidate per search: the rest of the page comes from the keyword index
    settings, folder = indexed_runbooks(tmp_path, RUNBOOKS, candidate_floor=1)
    outcome = search_runbooks(settings, "VPN 証明書 証拠 保管", data=folder, limit=1)
    assert len(outcome.vector_cosines) == 1
    outcome = search_runbooks(settings, "VPN 証明書 証拠 保管", data=folder, limit=4)
    corpus = runbook_corpus(settings, folder)
    stored = corpus.vectors.vectors([h.stored.vector_key for h in outcome.hits])
    for h in outcome.hits:
        expected = float(np.dot(outcome.query_vector, stored[h.stored.vector_key]))
        assert h.raw["cosine"] == pytest.approx(max(0.0, expected), abs=1e-5), h.chunk.heading
    assert all(h.raw["cosine"] > 0 for h in outcome.hits)
