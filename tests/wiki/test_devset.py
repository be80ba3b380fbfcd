"""make-dev: chunk boundaries of rebuilt articles and the gold mapping of JSQuAD answers
(on the project's JSQuAD-format fixture)."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest

from core.errors import InputError
from core.ingest.wikipedia import Article, article_document, jsquad_articles, parse_sources
from core.settings import Settings
from core.text.chunking import chunk_document, content_units
from core.wiki.devset import make_dev_set, read_dev_set
from tests.support.jsquad_fixture import ARTICLES, question_count, write_jsquad


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory):
    path = write_jsquad(tmp_path_factory.mktemp("devset") / "jsquad.json")
    return parse_sources(f"jsquad:{path}")[0]


def rebuild(spec) -> dict:
    """source -> (document, 450/60 chunks) for every article, rebuilt as a build does."""
    out = {}
    for title, paragraphs in jsquad_articles(spec):
        doc = article_document(Article(title, "\n".join(p.text for p in paragraphs), title))
        out[doc.source] = (doc, chunk_document(doc, 450, 60))
    return out


@pytest.fixture(scope="module")
def rebuilt(spec) -> dict:
    return rebuild(spec)


@pytest.fixture(scope="module")
def full_dev(spec) -> tuple:
    return make_dev_set(spec, 450, 60)


def check_gold_chunks(records: list[dict], rebuilt: dict) -> None:
    for record in records:
        assert record["gold_sources"], record
        for gold in record["gold_sources"]:
            source, _, number = gold.rpartition("#")
            chunk = rebuilt[source][1][int(number)]
            # chunk.text is what is indexed: the title, a newline, the body
            assert any(answer in chunk.text for answer in record["answers"]), (record, gold)


def test_article_chunks_are_450_with_60_overlap(rebuilt):
    longest = max(rebuilt.values(), key=lambda pair: len(pair[0].text))
    doc, chunks = longest
    assert len(chunks) >= 3
    assert sum(len(c) > 1 for _, c in rebuilt.values()) >= 2  # more than one multi-chunk article
    for a, b in itertools.pairwise(chunks):
        # sizes in content units (core.text.windows): characters for Japanese text
        assert content_units(a.body) <= 450 and a.body == doc.text[a.start : a.end]
        assert a.start < b.start and a.end < b.end
        # consecutive windows share at most the overlap (whole sentences, or nothing)
        assert b.start <= a.end and content_units(doc.text[b.start : a.end]) <= 60
        assert doc.text[b.start - 1] in "。\n"  # a window opens on a sentence
    assert chunks[0].start == 0 and chunks[-1].end == len(doc.text)
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))


def test_every_gold_chunk_contains_the_answer(rebuilt, full_dev):
    records, report = full_dev
    assert report.questions == len(records) == question_count()
    assert report.unmapped == 0 and report.covered + report.partial + report.title == len(records)
    check_gold_chunks(records, rebuilt)
    first = ARTICLES[0]
    question, answers = first.paragraphs[0].qas[0]
    assert records[0] == {
        "id": "fx0p0q0",
        "question": question,
        "answers": list(answers),
        "gold_sources": [f"jawiki:{first.title}#0"],  # the answer opens the article
    }


def test_gold_follows_the_answer_span_not_the_first_occurrence(spec, rebuilt):
    records, _ = make_dev_set(spec, 450, 60, max_articles=1)  # 灯台: several chunks
    doc, chunks = rebuilt[f"jawiki:{ARTICLES[0].title}"]
    late = [r for r in records if all(int(g.rpartition("#")[2]) > 0 for g in r["gold_sources"])]
    assert late, "some answers lie past the first chunk"
    earlier = 0
    for record in late:
        first = min(int(g.rpartition("#")[2]) for g in record["gold_sources"])
        answer = record["answers"][0]
        assert answer in chunks[first].body
        # the same words may occur earlier in the article; gold is where the question points
        earlier += doc.text.find(answer) < chunks[first].start
    assert earlier >= 1, "the fixture has an answer that also occurs before its gold chunk"


def test_answer_in_the_title_maps_to_the_paragraph_chunks(full_dev):
    records, report = full_dev
    titled = [
        (a.title, q)
        for a in ARTICLES
        for p in a.paragraphs
        for q, answers in p.qas
        if a.title in answers and a.title not in p.text
    ]
    assert report.title == len(titled) >= 1
    for title, question in titled:
        record = next(r for r in records if r["question"] == question)
        assert record["gold_sources"] == [f"jawiki:{title}#0"]


def test_other_chunk_sizes_change_the_gold_numbers(spec):
    small, _ = make_dev_set(spec, 200, 30, max_articles=1)
    large, _ = make_dev_set(spec, 450, 60, max_articles=1)
    assert [r["question"] for r in small] == [r["question"] for r in large]
    assert max(int(g.rpartition("#")[2]) for r in small for g in r["gold_sources"]) > max(
        int(g.rpartition("#")[2]) for r in large for g in r["gold_sources"]
    )


def test_the_real_jsquad_valid_maps_every_answer():
    """JSQuAD valid (JGLUE v1.3) itself, only when WB_DATASETS_DIR points at it."""
    path = None
    if os.environ.get("WB_DATASETS_DIR"):
        path = Settings(_env_file=None).dataset_path("jsquad-v1.3", "valid-v1.3.json")
    if path is None:
        pytest.skip(
            "JSQuAD valid (JGLUE v1.3) is not configured: set WB_DATASETS_DIR to a folder holding "
            "jsquad-v1.3/valid-v1.3.json to run this check"
        )
    real = parse_sources(f"jsquad:{Path(path)}")[0]
    records, report = make_dev_set(real, 450, 60)
    assert report.questions == len(records) > 1000
    assert report.unmapped == 0 and report.title >= 1
    check_gold_chunks(records, rebuild(real))


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
