"""make-dev: chunk boundaries of rebuilt articles and the gold mapping of JSQuAD answers."""

from __future__ import annotations

import itertools
import json

import pytest

from core.errors import InputError
from core.ingest.wikipedia import Article, article_document, jsquad_articles, parse_sources
from core.text.chunking import chunk_document, content_units
from core.wiki.devset import make_dev_set, read_dev_set
from tests.conftest import JSQUAD_VALID

SPEC = parse_sources(f"jsquad:{JSQUAD_VALID}")[0]


@pytest.fixture(scope="module")
def rebuilt() -> dict:
    """title -> (document, chunks) for every article of the shared JSQuAD file."""
    out = {}
    for title, paragraphs in jsquad_articles(SPEC):
        doc = article_document(Article(title, "\n".join(p.text for p in paragraphs), title))
        out[doc.source] = (doc, chunk_document(doc, 450, 60))
    return out


@pytest.fixture(scope="module")
def full_dev() -> tuple:
    return make_dev_set(SPEC, 450, 60)


def test_article_chunks_are_450_with_60_overlap(rebuilt):
    doc, chunks = rebuilt["jawiki:日本共産党"]  # the longest article: ~100 chunks
    assert len(chunks) > 50
    for a, b in itertools.pairwise(chunks):
        # sizes in content units (core.text.windows): characters for Japanese text
        assert content_units(a.body) <= 450 and a.body == doc.text[a.start : a.end]
        assert a.start < b.start and a.end < b.end
        # consecutive windows share at most the overlap
        assert b.start < a.end and content_units(doc.text[b.start : a.end]) <= 60
    assert chunks[0].start == 0 and chunks[-1].end == len(doc.text)
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))


def test_every_gold_chunk_contains_the_answer(rebuilt, full_dev):
    records, report = full_dev
    assert report.questions == len(records) == 4442
    assert report.unmapped == 0 and report.covered + report.partial + report.title == len(records)
    for record in records:
        assert record["gold_sources"], record
        for gold in record["gold_sources"]:
            source, _, number = gold.rpartition("#")
            chunk = rebuilt[source][1][int(number)]
            # chunk.text is what is indexed: the title, a newline, the body
            assert any(answer in chunk.text for answer in record["answers"]), (record, gold)
    covered = next(r for r in records if r["id"] == "a10336p0q0")
    assert covered == {
        "id": "a10336p0q0",
        "question": "日本で梅雨がないのは北海道とどこか。",
        "answers": ["小笠原諸島", "小笠原諸島を除く日本"],
        "gold_sources": ["jawiki:梅雨#0"],
    }


def test_gold_follows_the_answer_span_not_the_first_occurrence(rebuilt):
    records, _ = make_dev_set(SPEC, 450, 60, max_articles=1)  # 梅雨: 20+ chunks
    chunks = rebuilt["jawiki:梅雨"][1]
    late = [r for r in records if all(int(g.rpartition("#")[2]) > 3 for g in r["gold_sources"])]
    assert late, "some answers lie deep in the article"
    for record in late:
        first = min(int(g.rpartition("#")[2]) for g in record["gold_sources"])
        answer = record["answers"][0]
        # the same words may occur earlier in the article; gold is where the question points
        assert answer in chunks[first].body


def test_answer_in_the_title_maps_to_the_paragraph_chunks(full_dev):
    records, report = full_dev
    assert report.title >= 1
    cellist = next(r for r in records if r["question"] == "チェロ奏者のことをなんというか")
    assert cellist["gold_sources"] == ["jawiki:チェリスト#0"]


def test_other_chunk_sizes_change_the_gold_numbers():
    small, _ = make_dev_set(SPEC, 200, 30, max_articles=1)
    large, _ = make_dev_set(SPEC, 450, 60, max_articles=1)
    assert [r["question"] for r in small] == [r["question"] for r in large]
    assert max(int(g.rpartition("#")[2]) for r in small for g in r["gold_sources"]) > max(
        int(g.rpartition("#")[2]) for r in large for g in r["gold_sources"]
    )


def test_make_dev_refuses_other_sources():
    with pytest.raises(InputError, match="jsquad:"):
        make_dev_set(parse_sources("articles.jsonl")[0], 450, 60)


def test_read_dev_set_errors(tmp_path):
    with pytest.raises(InputError, match="見つかりません"):
        read_dev_set(tmp_path / "none.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "gold_sources": []}\n{oops\n', "utf-8")
    with pytest.raises(InputError, match="2 行目"):
        read_dev_set(bad)
    shape = tmp_path / "shape.jsonl"
    shape.write_text(json.dumps({"q": 1}) + "\n", "utf-8")
    with pytest.raises(InputError, match="question と gold_sources"):
        read_dev_set(shape)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", "utf-8")
    with pytest.raises(InputError, match="質問がありません"):
        read_dev_set(empty)
