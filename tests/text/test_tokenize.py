import queue
import threading

import pytest

from core.text import tokenize
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
    assert {"fs01.corp.example", "192.0.2.10", "get-aduser"} <= set(tokens)
    # each lettered part, queried alone, finds the compound (plain-word parts are stemmed)
    for part in ("fs01", "corp", "example", "Get", "ADUser"):
        assert janome.tokenize(part) and set(janome.tokenize(part)) <= set(tokens)
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
    # English words are lowercased Snowball stems ("powershell" -> "powershel")
    assert janome.tokenize("EDRでPowerShellを確認") == ["edr", "powershel", "確認"]


# --- English -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["janome", "char-bigram"])
def test_english_words_are_stemmed_lowercased_and_stop_worded(name: str) -> None:
    tokenizer = get_tokenizer(name)
    assert tokenizer.tokenize("Isolating the infected hosts from the network") == [
        "isol",
        "infect",
        "host",
        "network",
    ]
    # another inflection, another case: the same terms
    assert tokenizer.tokenize("ISOLATE an Infected Host") == ["isol", "infect", "host"]
    assert tokenizer.tokenize("How do I do it? Which of these were they?") == []
    # the fragments of contractions go with their stop words
    assert tokenizer.tokenize("Don't delete the user's logs") == ["delet", "user", "log"]


def test_capitalized_acronyms_are_not_stop_words(janome: JanomeTokenizer) -> None:
    assert janome.tokenize("IT teams, and it is OR that") == ["it", "team", "or"]
    assert janome.tokenize("A plan") == ["plan"]  # one capital letter is a word, not an acronym


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("CVE-2024-1234", ["cve-2024-1234", "cve"]),
        ("NIST SP 800-61", ["nist", "sp", "800-61"]),
        ("192.168.10.5", ["192.168.10.5"]),
        ("v2.3.1", ["v2.3.1", "v2"]),
        ("OpenSSL 3.0.13", ["openssl", "3.0.13"]),
        ("log4j", ["log4j"]),  # letters and digits: an identifier, not stemmed
        ("4625", ["4625"]),
        ("--force", ["--force"]),
    ],
)
def test_english_identifiers_stay_whole(
    janome: JanomeTokenizer, text: str, expected: list[str]
) -> None:
    assert janome.tokenize(text) == expected


def test_hyphenated_english_words_match_the_separate_words(janome: JanomeTokenizer) -> None:
    tokens = janome.tokenize("our incident-response process")
    assert "incident-response" in tokens
    assert set(janome.tokenize("incident response")) <= set(tokens)
    # stop-word parts are dropped like words
    assert janome.tokenize("out-of-band") == ["out-of-band", "band"]


def test_mixed_japanese_and_english_in_one_index(janome: JanomeTokenizer) -> None:
    tokens = janome.tokenize("感染端末をネットワークから隔離する (isolating the infected host)")
    assert {"感染", "端末", "ネットワーク", "隔離", "isol", "infect", "host"} <= set(tokens)
    # a query in either language reaches the same text
    assert set(janome.tokenize("隔離の手順")) & set(tokens)
    assert set(janome.tokenize("isolate infected hosts")) <= set(tokens)


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


def test_janome_tokenizers_are_lent_not_shared_and_outlive_their_thread(
    janome: JanomeTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The served app runs each rerun in a new thread: building a Tokenizer per thread showed
    up in bench.concurrency. Tokenizers are borrowed from a pool, never used by two at once."""
    text = "ランサムウェアの感染端末をネットワークから隔離する"
    expected = janome.tokenize(text)
    # start from an empty pool (other tests leave idle tokenizers in it)
    monkeypatch.setattr(tokenize, "_idle_janome", queue.SimpleQueue())
    lent: list[int] = []
    results: list[list[str]] = []
    barrier = threading.Barrier(3)

    def hold() -> None:
        with _janome() as impl:
            lent.append(id(impl))
            barrier.wait(timeout=10)  # all three hold one at the same moment
            barrier.wait(timeout=10)
        results.append(janome.tokenize(text))

    threads = [threading.Thread(target=hold) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 3
    assert len(set(lent)) == 3  # held at once: three distinct tokenizers
    # later threads reuse the idle ones instead of building new ones
    reused: list[int] = []

    def borrow() -> None:
        with _janome() as impl:
            reused.append(id(impl))

    for _ in range(5):
        thread = threading.Thread(target=borrow)
        thread.start()
        thread.join()
    assert set(reused) <= set(lent)


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


def test_query_terms_keep_english_surface_forms_without_stop_words(
    janome: JanomeTokenizer, bigram: CharBigramTokenizer
) -> None:
    for tokenizer in (janome, bigram):
        terms = query_terms("How do I isolate the infected hosts? IT の手順", tokenizer)
        assert terms[:4] == ["isolate", "infected", "hosts", "IT"]


def test_tokenizers_have_a_version() -> None:
    for name in tokenizer_names():
        assert get_tokenizer(name).version >= 2  # 2: English stemming and stop words


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
