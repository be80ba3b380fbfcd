"""Focus: the share of the query's bigrams within two consecutive sentences of a passage."""

from __future__ import annotations

import pytest

from core.retrieval.focus import apply_focus, char_bigrams, focus
from core.retrieval.hits import Hit
from tests.support.hits import make_hit


def hit(body: str, combined: float, n: int) -> Hit:
    return make_hit(body, combined, n, source="jawiki:doc")


def test_bigrams_ignore_case_and_whitespace() -> None:
    assert char_bigrams("Ab c") == {"ab", "bc"}
    assert char_bigrams("あ") == set()


def test_focus_is_one_when_two_neighbouring_sentences_hold_the_whole_query() -> None:
    text = "関係ない前置き。梅雨は東アジアの気象。雨季の一種である。無関係な後書き。"
    assert focus(char_bigrams("東アジアの気象で雨季の一種"), text) < 1.0  # "で" is missing
    assert focus(char_bigrams("東アジアの気象。雨季の一種"), text) == pytest.approx(1.0)


def test_scattered_terms_focus_less_than_gathered_ones() -> None:
    query = char_bigrams("梅雨入りはいつ気象庁が発表するか")
    gathered = "前置きの文。梅雨入りは気象庁が発表する。後書きの文。"
    scattered = "梅雨入りの話。別の話題の文。さらに別の文。気象庁の組織。最後に発表する。"
    assert focus(query, gathered) > focus(query, scattered) > 0.0
    assert focus(set(), gathered) == 0.0 and focus(query, "") == 0.0


def test_apply_focus_reorders_only_the_top_k() -> None:
    hits = [
        hit("梅雨の話。別の文。さらに別の文。入りの時期。", 0.9, 0),
        hit("梅雨入りは気象庁が発表する。", 0.8, 1),
        hit("無関係な文。", 0.7, 2),
        hit("梅雨入りは気象庁が発表する。", 0.1, 3),  # below top_k: stays last
    ]
    apply_focus(hits, "梅雨入りは気象庁が発表する", weight=1.0, top_k=3)
    assert [h.chunk.chunk_index for h in hits] == [1, 0, 2, 3]
    assert hits[0].raw["focus"] == pytest.approx(1.0)
    assert all(0.0 <= h.combined <= 1.0 for h in hits)
    assert hits[3].combined == 0.1 and "focus" not in hits[3].raw


def test_zero_weight_changes_nothing() -> None:
    hits = [hit("無関係。", 0.9, 0), hit("梅雨入り。", 0.8, 1)]
    apply_focus(hits, "梅雨入り", weight=0.0, top_k=16)
    assert [h.combined for h in hits] == [0.9, 0.8] and all(not h.raw for h in hits)
