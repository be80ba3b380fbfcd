"""Highlighting of query terms in evidence text: escaped, and English words found by stem."""

from __future__ import annotations

from core.generation.citations import highlight_html
from core.generation.extractive import term_coverage
from core.text.tokenize import get_tokenizer, query_terms


def test_stemmed_query_words_highlight_their_inflected_forms_escaped() -> None:
    terms = query_terms("How do I isolate an infected host?", get_tokenizer("janome"))
    assert terms == ["isolate", "infected", "host"]
    html = highlight_html("<b>Isolating</b> the hosts & infection", terms)
    assert html == (
        "&lt;b&gt;<mark>Isolating</mark>&lt;/b&gt; the <mark>hosts</mark> &amp; "
        "<mark>infection</mark>"
    )


def test_mixed_japanese_and_english_terms_highlight_both() -> None:
    terms = query_terms("EDR で isolate した端末", get_tokenizer("janome"))
    html = highlight_html("EDRs isolated the 端末 quickly", terms)
    assert html == "<mark>EDRs</mark> <mark>isolated</mark> the <mark>端末</mark> quickly"


def test_term_coverage_counts_english_words_by_stem() -> None:
    assert term_coverage("Isolating the hosts", ["isolate", "host"]) == 1.0
    # a plain word inside a longer word does not count; identifiers match as written
    assert (
        term_coverage("the catalog of CVE-2024-1234", ["log", "CVE-2024-1234"]) == 6 / 9
    )  # lengths capped at 6
    assert term_coverage("隔離した", ["隔離", "isolate"]) == 2 / 8
