"""Wikipedia sources: each shape, several at once, normalization, and bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core.errors import InputError
from core.ingest.wikipedia import load_articles, parse_sources

RECORDS = [
    {"id": "1", "title": "東京都", "text": "東京都は日本の首都である。\n\n　人口は約1400万人。  "},
    {"id": "2", "title": "大阪府", "text": "大阪府は近畿地方の府である。ＡＢＣ１２３"},
]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return path


def write_jsquad(path: Path) -> Path:
    data = {
        "data": [
            {
                "title": "薩長同盟",
                "paragraphs": [
                    {"context": "薩長同盟 [SEP] 薩長同盟は1866年に成立した。", "qas": []},
                    {"context": "薩長同盟 [SEP] 坂本龍馬が仲介した。", "qas": []},
                ],
            },
            {
                "title": "大政奉還",
                "paragraphs": [
                    {"context": "大政奉還 [SEP] 1867年、政権を朝廷に返上した。", "qas": []}
                ],
            },
        ]
    }
    path.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    return path


def test_jsonl_records_are_normalized(tmp_path):
    report = load_articles(parse_sources(str(write_jsonl(tmp_path / "a.jsonl", RECORDS))))
    tokyo, osaka = report.articles
    assert tokyo.doc_id == tokyo.source == "jawiki:東京都" and tokyo.kind == "article"
    # whitespace runs (newlines, ideographic space) folded to one space, trimmed
    assert tokyo.text == "東京都は日本の首都である。 人口は約1400万人。"
    assert osaka.text.endswith("ABC123")  # safe NFKC: full-width ASCII to ASCII


def test_parquet_and_json_list_records(tmp_path):
    parquet = tmp_path / "a.parquet"
    pq.write_table(pa.Table.from_pylist(RECORDS), parquet)
    listing = tmp_path / "b.json"
    listing.write_text(json.dumps([{"title": "京都府", "text": "京都府は府である。"}]), "utf-8")
    report = load_articles(parse_sources(f"{parquet},{listing}"))
    assert [d.title for d in report.articles] == ["東京都", "大阪府", "京都府"]
    assert report.per_source == {str(parquet): 2, str(listing): 1}


def test_jsquad_paragraphs_are_concatenated_in_order_without_prefix(tmp_path):
    report = load_articles(parse_sources(f"jsquad:{write_jsquad(tmp_path / 'q.json')}"))
    doc = report.articles[0]
    assert doc.title == "薩長同盟"
    assert doc.text == "薩長同盟は1866年に成立した。 坂本龍馬が仲介した。"
    assert "[SEP]" not in doc.text


def test_several_sources_first_title_wins_and_max_caps_the_total(tmp_path):
    first = write_jsonl(tmp_path / "a.jsonl", RECORDS)
    second = write_jsonl(
        tmp_path / "b.jsonl", [{"title": "東京都", "text": "別の本文。"}, *RECORDS[1:]]
    )
    jsquad = write_jsquad(tmp_path / "q.json")
    report = load_articles(parse_sources([f"{first},{second}", f"jsquad:{jsquad}"]))
    titles = [d.title for d in report.articles]
    assert titles == ["東京都", "大阪府", "薩長同盟", "大政奉還"]
    assert report.articles[0].text.startswith("東京都は日本の首都")
    assert report.duplicates == 2
    capped = load_articles(parse_sources(f"{first},jsquad:{jsquad}"), max_articles=3)
    assert [d.title for d in capped.articles] == ["東京都", "大阪府", "薩長同盟"]


def test_content_hash_is_stable_and_changes_with_the_text(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", RECORDS)
    one = load_articles(parse_sources(str(path))).articles[0].content_hash
    assert one == load_articles(parse_sources(str(path))).articles[0].content_hash
    write_jsonl(path, [{**RECORDS[0], "text": "変更した本文。"}])
    assert load_articles(parse_sources(str(path))).articles[0].content_hash != one


def test_hf_source_without_datasets_names_the_local_options(monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)  # import fails, as on this machine
    with pytest.raises(InputError) as err:
        load_articles(parse_sources("hf:20231101.ja"), max_articles=5)
    message = err.value.user_message
    assert "datasets" in message and "JSONL" in message and "jsquad:" in message


@pytest.mark.parametrize(
    ("content", "name", "fragment"),
    [
        (None, "missing.jsonl", "見つかりません"),
        ("", "empty.jsonl", "空のファイル"),
        ("\n\n", "blank.jsonl", "記事がありません"),
        ('{"title": "A", "text": "本文"}\n{broken\n', "bad.jsonl", "2 行目"),
        ('{"title": "A"}\n', "nokey.jsonl", "title と text"),
        ('{"title": "A", "text": "   "}\n', "emptytext.jsonl", "記事がありません"),
        ("not json", "bad.json", "JSON として読み込めません"),
        ('{"data": 5}', "shape.json", "JSQuAD 形式ではありません"),
        ("PAR1garbage", "bad.parquet", "Parquet"),
    ],
)
def test_bad_sources_give_a_clear_japanese_message(tmp_path, content, name, fragment):
    path = tmp_path / name
    if content is not None:
        path.write_text(content, "utf-8")
    prefix = "jsquad:" if name in ("shape.json",) else ""
    with pytest.raises(InputError, match=fragment):
        load_articles(parse_sources(prefix + str(path)))


def test_parquet_without_text_column(tmp_path):
    path = tmp_path / "cols.parquet"
    pq.write_table(pa.Table.from_pylist([{"id": "1", "title": "A"}]), path)
    with pytest.raises(InputError, match="列 text"):
        load_articles(parse_sources(str(path)))


def test_unknown_source_forms_are_refused():
    with pytest.raises(InputError, match="形式が分かりません"):
        parse_sources("articles.csv")
    with pytest.raises(InputError, match="ソースが指定されていません"):
        parse_sources(" , ")
    with pytest.raises(InputError, match="jsquad:"):
        parse_sources("jsquad:")


def test_every_local_file_is_checked_before_any_is_read(tmp_path):
    good = write_jsonl(tmp_path / "a.jsonl", RECORDS)
    with pytest.raises(InputError, match="見つかりません"):
        load_articles(parse_sources(f"{good},{tmp_path / 'nope.parquet'}"))
