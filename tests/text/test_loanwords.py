"""Loanwords: an English word and its katakana spelling share a phonetic key, and a question's
word finds its spelling in the other script among the words the runbooks use."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.runbooks import search_runbooks
from core.text.loanwords import LoanwordIndex, phonetic_key, romanize, vowels_agree
from tests.conftest import indexed_runbooks


@pytest.mark.parametrize(
    ("english", "katakana"),
    [
        ("replica", "レプリカ"),
        ("replicas", "レプリカ"),
        ("failover", "フェイルオーバー"),
        ("failover", "フェールオーバー"),
        ("appliance", "アプライアンス"),
        ("memory", "メモリー"),
        ("processes", "プロセス"),
        ("cluster", "クラスター"),
        ("service", "サービス"),
        ("timestamp", "タイムスタンプ"),
        ("authentication", "オーセンティケーション"),
        ("channel", "チャンネル"),
        ("network", "ネットワーク"),
        ("window", "ウィンドウ"),
        ("version", "バージョン"),
        ("session", "セッション"),
        ("credential", "クレデンシャル"),
        ("runbook", "ランブック"),
        ("policies", "ポリシー"),
        ("software", "ソフトウェア"),
        ("xserver", "エックスサーバー"),  # a leading X is said by its letter's name
        ("export", "エクスポート"),
    ],
)
def test_an_english_word_and_its_katakana_spelling_share_a_key(english, katakana):
    assert len(phonetic_key(english)) >= 3
    assert phonetic_key(english) == phonetic_key(katakana)


@pytest.mark.parametrize(
    ("english", "katakana"),
    [
        ("addition", "デザイン"),  # a word opening on a vowel is not one opening on a consonant
        ("xsoar", "アクセス"),  # the letter's name only before a word of its own
        ("plan", "パイプライン"),
        ("press", "プロセス"),
        ("dashboard", "ダウンロード"),
    ],
)
def test_words_that_only_look_alike_differ(english, katakana):
    assert phonetic_key(english) != phonetic_key(katakana)


def test_romanization_follows_hepburn_with_loanword_digraphs():
    assert romanize("チケット") == "chiketo"  # ッ and ー leave no letter
    assert romanize("ティー") == "ti"
    assert romanize("ファイアウォール") == "faiaworu"
    assert romanize("ランブック") == "rambuku"  # ン before b is m
    assert phonetic_key("漢字") == "" and phonetic_key("v2") == ""


def test_counterparts_come_only_from_the_corpus_words():
    index = LoanwordIndex(
        [
            "レプリカを昇格する前に、レプリケーションの状態を確認します。",
            "Check the appliance memory; a process may be killed.",
        ]
    )
    found = index.counterparts("How do I promote the replica, and is the replication healthy?")
    assert found == {"replica": ["レプリカ"], "replication": ["レプリケーション"]}
    assert index.counterparts("アプライアンスのメモリが足りない") == {
        "アプライアンス": ["appliance"],
        "メモリ": ["memory"],
    }
    # stop words, short words and words the corpus lacks find nothing
    assert index.counterparts("What about the cluster and the data?") == {}


@pytest.mark.parametrize(
    ("english", "katakana"),
    [
        ("break", "ブロック"),
        ("security", "スケールアウト"),
        ("region", "ログイン"),
    ],
)
def test_same_consonants_with_another_vowel_are_another_word(english, katakana):
    """The key compares consonants only; the first vowel tells "break" from ブロック."""
    assert phonetic_key(english) == phonetic_key(katakana)
    assert not vowels_agree(english, katakana)
    assert LoanwordIndex([f"{katakana}の手順"]).counterparts(f"the {english} procedure") == {}


def test_the_first_vowel_follows_katakana_spelling():
    for english, katakana in [
        ("stream", "ストリーム"),  # the vowel after a cluster: ス・ト・リー
        ("agent", "エージェント"),
        ("server", "サーバー"),
        ("cluster", "クラスター"),
        ("user", "ユーザー"),
        ("mailbox", "メールボックス"),
        ("school", "スクール"),  # a doubled vowel is one sound: "oo" is ウ or オ
        ("bookmark", "ブックマーク"),
    ]:
        assert vowels_agree(english, katakana), (english, katakana)


RUNBOOKS = {
    "replica-failover.md": """# レプリカへの切り替え手順

## 切り替えの前に

1. レプリカのレプリケーションが遅れていないことを管理画面で見る。
2. 利用者に作業の時間帯を知らせる。

## 昇格

レプリカを昇格させ、利用者の接続先を新しいプライマリに向ける。
""",
    "memory-pressure.md": """# 社内ポータルの応答が遅いときの対応

## 状況の把握

1. アプライアンスのメモリ使用率とスワップの量を見る。
2. 使用量の多いプロセスを特定し、担当者に知らせる。
""",
}


def test_an_english_question_finds_the_japanese_runbook_by_its_loanwords(tmp_path: Path):
    """The glossary translates none of "replica", "promote", "lag": the keyword search
    still reaches the runbook that spells the replica レプリカ."""
    settings, _ = indexed_runbooks(tmp_path, RUNBOOKS)
    outcome = search_runbooks(settings, "Is the replica lagging before we promote it?", limit=3)
    assert "レプリカ" in outcome.translated
    top = outcome.hits[0]
    assert top.chunk.source == "replica-failover.md"
    assert top.raw["bm25"] > 0  # found by keyword, not by the vectors alone
    appliance = search_runbooks(settings, "How much memory does the appliance use?", limit=3)
    assert appliance.hits[0].chunk.source == "memory-pressure.md"
    assert appliance.hits[0].raw["bm25"] > 0
