import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.text.normalize import (
    normalize_article,
    normalize_query,
    normalize_text,
    safe_nfkc,
    translation_table,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ＡＢＣ１２３ｘｙｚ", "ABC123xyz"),
        ("ＣＶＥ－２０２４－１２３４５！？", "CVE-2024-12345!?"),
        ("ｶﾀｶﾅ", "カタカナ"),
        ("ｶﾞｲﾄﾞ ﾊﾟｽ", "ガイド パス"),  # voicing marks are composed
        ("㍻", "平成"),
        ("㌔", "キロ"),
        ("30℃", "30°C"),
        ("⼀", "一"),  # Kangxi radical from PDF extraction
        ("Ⅻ", "XII"),
        ("ﬁle", "file"),
    ],
)
def test_safe_nfkc_applies_nfkc(raw: str, expected: str) -> None:
    assert normalize_text(raw) == expected


@pytest.mark.parametrize(
    "kept",
    [
        "①②③⑩⑳",
        "㉑㊿",
        "Ⓐⓐ",
        "㊤㊥",
        "⑴⒜㈠",
        "⒈⒉",
        "㈱",
        "x²",
        "10⁶",
        "H₂O",
        "™",
        "2½",
        "㎡",
        "゛゜",
    ],
)
def test_excluded_characters_are_kept(kept: str) -> None:
    assert normalize_text(kept) == kept
    assert normalize_article(kept) == kept


def test_circled_steps_stay_circled_in_a_runbook() -> None:
    raw = "①　ＦＷでＩＰを遮断する\n②　ログを保全する"
    assert normalize_text(raw) == "① FWでIPを遮断する\n② ログを保全する"


def test_compatibility_spaces_become_spaces() -> None:
    for space in ["\u3000", "\u00a0", "\u2002", "\u2003", "\u2009", "\u202f", "\u1680"]:
        assert normalize_text(f"a{space}b") == "a b"


def test_whitespace_folding_keeps_lines() -> None:
    raw = "# 見出し　　タイトル  \r\n\r\n\r\n\r\n本文\t\tです。   \r次の行\n\n\n"
    assert normalize_text(raw) == "# 見出し タイトル\n\n本文 です。\n次の行"


def test_leading_indentation_is_kept_inner_runs_fold() -> None:
    assert normalize_text("- a\n  - b   c\n") == "- a\n  - b c"


def test_leading_and_trailing_blank_lines_removed() -> None:
    assert normalize_text("\n\n   \n本文\n  \n\n") == "本文"


def test_controls_removed_tab_to_space_bom_removed() -> None:
    raw = "\ufeff本文\x00\x07\x1b[0m\t続き\u200b\x7f\x85次"
    assert normalize_text(raw) == "本文[0m 続き\n次"


def test_form_feed_becomes_a_line_break() -> None:
    assert normalize_text("1ページ目\x0c2ページ目") == "1ページ目\n2ページ目"


def test_empty_and_blank() -> None:
    assert normalize_text("") == ""
    assert normalize_text(" \n\t\u3000\n") == ""
    assert normalize_article("") == ""
    assert normalize_query("  　") == ""


def test_normalize_article_folds_all_whitespace() -> None:
    raw = "　東京都（とうきょうと）は、\n\n日本の首都。\tＴｏｋｙｏ  "
    assert normalize_article(raw) == "東京都(とうきょうと)は、 日本の首都。 Tokyo"


def test_normalize_query() -> None:
    assert normalize_query("  ｆｓ０１　の\n不審な通信は？ ") == "fs01 の 不審な通信は?"


def test_translation_table_is_cached() -> None:
    assert translation_table() is translation_table()


_JAPANESEISH = st.characters(
    codec="utf-8",
    categories=["L", "M", "N", "P", "S", "Zs", "Cc", "Cf"],
)


@given(
    st.text(_JAPANESEISH, max_size=60) | st.text("ａＡ１ｶﾞﾟ①㍻ \u3000\n\r\t\x0c#。、", max_size=60)
)
def test_normalize_text_is_idempotent(text: str) -> None:
    once = normalize_text(text)
    assert normalize_text(once) == once
    assert "\r" not in once
    assert all("  " not in line.lstrip(" ") for line in once.split("\n"))  # but indentation
    assert all(line == line.rstrip() for line in once.split("\n"))
    assert not once.startswith("\n")
    assert not once.endswith(("\n", " "))
    assert "\n\n\n" not in once


@given(st.text(_JAPANESEISH, max_size=60))
def test_article_and_query_are_idempotent_single_spaced(text: str) -> None:
    for normalize in (normalize_article, normalize_query):
        once = normalize(text)
        assert normalize(once) == once
        assert "  " not in once
        assert "\n" not in once
        assert once == once.strip()


def _nfkc_safe(char: str) -> bool:
    table = translation_table()
    nfkc = unicodedata.normalize("NFKC", char)
    return nfkc == char or ord(char) in table


_PLAIN = st.characters(
    codec="utf-8",
    categories=["L", "M", "N", "P", "S"],
).filter(_nfkc_safe)


@given(st.text(_PLAIN, max_size=40))
def test_equals_nfkc_when_no_excluded_character(text: str) -> None:
    assert safe_nfkc(text) == unicodedata.normalize("NFKC", text)
