import threading

import pytest

from core.text.tokenize import (
    CharBigramTokenizer,
    JanomeTokenizer,
    Tokenizer,
    _janome,
    get_tokenizer,
    query_terms,
    tokenizer_names,
)


@pytest.fixture(scope="module")
def janome() -> JanomeTokenizer:
    return JanomeTokenizer()


@pytest.fixture(scope="module")
def bigram() -> CharBigramTokenizer:
    return CharBigramTokenizer()


@pytest.mark.parametrize(
    ("text", "token"),
    [
        ("CVE-2024-12345 の脆弱性", "cve-2024-12345"),
        ("192.0.2.10 からの通信", "192.0.2.10"),
        ("fs01.corp.example を隔離", "fs01.corp.example"),
        ("Get-ADUser で確認", "get-aduser"),
        ("イベントID 4625 が多発", "4625"),
        ("rm -rf /tmp/x を実行しない", "-rf"),
        ("rm -rf /tmp/x を実行しない", "/tmp/x"),
        ("DROP TABLE は禁止", "drop"),
        (r"C:\Windows\System32\cmd.exe を確認", r"c:\windows\system32\cmd.exe"),
        ("共有 ADMIN$ への接続", "admin$"),
        ("ＣＶＥ－２０２４－１２３４５", "cve-2024-12345"),  # full-width input
        ("CVE‐2024‐12345", "cve-2024-12345"),  # U+2010 hyphens from PDFs
    ],
)
@pytest.mark.parametrize("name", ["janome", "char-bigram"])
def test_technical_tokens_survive(name: str, text: str, token: str) -> None:
    assert token in get_tokenizer(name).tokenize(text)


def test_compound_ascii_tokens_also_emit_lettered_parts(janome: JanomeTokenizer) -> None:
    tokens = janome.tokenize("fs01.corp.example と 192.0.2.10 と Get-ADUser")
    assert {"fs01", "corp", "example", "get", "aduser"} <= set(tokens)
    assert "192" not in tokens and "0" not in tokens


def test_janome_base_forms_of_content_words(janome: JanomeTokenizer) -> None:
    tokens = janome.tokenize("不審なファイルを削除しました。ログを調べた")
    assert tokens == ["不審", "ファイル", "削除", "する", "ログ", "調べる"]


def test_janome_drops_function_words_pronouns_and_symbols(janome: JanomeTokenizer) -> None:
    tokens = janome.tokenize("これは、その手順のことです。えーと？")
    assert "これ" not in tokens and "こと" not in tokens
    assert not {"は", "の", "です", "、", "。", "?", "えーと"} & set(tokens)
    assert tokens == ["手順"]


def test_janome_lowercases_ascii_and_handles_mixed_text(janome: JanomeTokenizer) -> None:
    assert janome.tokenize("EDRでPowerShellを確認") == ["edr", "powershell", "確認"]


def test_empty_and_blank(janome: JanomeTokenizer, bigram: CharBigramTokenizer) -> None:
    for tokenizer in (janome, bigram):
        assert tokenizer.tokenize("") == []
        assert tokenizer.tokenize(" \n、。！") == []
        assert tokenizer.tokenize_many(["", "ログ"]) == [[], tokenizer.tokenize("ログ")]


def test_char_bigrams(bigram: CharBigramTokenizer) -> None:
    assert bigram.tokenize("東京都") == ["東京", "京都"]
    assert bigram.tokenize("雨") == ["雨"]
    # punctuation and whitespace end a run; ASCII words are whole and lowercased
    assert bigram.tokenize("梅雨、雨季 EDR!") == ["梅雨", "雨季", "edr"]
    assert bigram.tokenize("ＡＢＣ") == ["abc"]


def test_one_janome_instance_per_thread(janome: JanomeTokenizer) -> None:
    expected = janome.tokenize("ランサムウェアの感染端末をネットワークから隔離する")
    instances: list[object] = []
    results: list[list[str]] = []

    def work() -> None:
        instances.append(_janome())
        results.append(janome.tokenize("ランサムウェアの感染端末をネットワークから隔離する"))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected, expected]
    assert len({id(instance) for instance in [*instances, _janome()]}) == 3
    assert _janome() is _janome()


def test_get_tokenizer() -> None:
    assert tokenizer_names() == ["janome", "char-bigram"]
    for name in tokenizer_names():
        tokenizer = get_tokenizer(name)
        assert isinstance(tokenizer, Tokenizer)
        assert tokenizer.name == name
    assert isinstance(get_tokenizer(" Janome "), JanomeTokenizer)


def test_get_tokenizer_unknown_name() -> None:
    with pytest.raises(ValueError, match=r"unknown tokenizer 'mecab'.*janome, char-bigram"):
        get_tokenizer("mecab")


def test_query_terms_janome_surface_forms_in_order(janome: JanomeTokenizer) -> None:
    terms = query_terms("ファイルを削除した場合、削除ログとGet-ADUserの結果を見られるか", janome)
    # surface forms first, base forms added when they contain a kanji; distinct; in order
    assert terms == ["ファイル", "削除", "場合", "ログ", "Get-ADUser", "結果", "見", "見る"]


def test_query_terms_is_case_insensitive_distinct(janome: JanomeTokenizer) -> None:
    assert query_terms("EDR edr ＥＤＲ のログ", janome) == ["EDR", "ログ"]


def test_query_terms_bigram_runs(bigram: CharBigramTokenizer) -> None:
    assert query_terms("梅雨の時期は? CVE-2024-1", bigram) == ["梅雨の時期は", "CVE-2024-1"]


def test_query_terms_with_a_plain_tokenizer() -> None:
    class Whitespace:
        name = "whitespace"

        def tokenize(self, text: str) -> list[str]:
            return text.split()

        def tokenize_many(self, texts: list[str]) -> list[list[str]]:
            return [self.tokenize(text) for text in texts]

    assert query_terms("a b a が", Whitespace()) == ["a", "b"]
