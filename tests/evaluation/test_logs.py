"""The audit-log reader on real and corrupt input, and the KPIs over it."""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from core.audit import append_record
from core.evaluation import logs
from core.evaluation.audit_stats import answer_modes, chain_status, daily, filter_frame, overview
from core.evaluation.logs import audit_files, load_audit_log, read_audit_file, read_record

JST = timezone(timedelta(hours=9))


def record(i: int, **kw) -> dict:
    return {
        "session_id": f"s{i % 3}",
        "query": f"ランサムウェアの隔離手順 {i}",
        "search_results": [
            {
                "chunk_id": "ransomware-isolation.md#1",
                "file": "ransomware-isolation.md",
                "heading": "初動対応",
                "score": 0.9,
                "excerpt": "感染端末を EDR でネットワーク隔離する。",
            }
        ],
        "answer": "1. 感染端末を EDR でネットワーク隔離する。 [1]",
        "answer_mode": "extractive",
        "processing_time_sec": 1.0 + i,
        "token_usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        "cost_usd": 0.0,
        "flags": {
            "insufficient_evidence": False,
            "dangerous_operation": i % 2 == 0,
            "ambiguous_query": False,
        },
        "page": "runbook_chat",
        **kw,
    }


def write_day(logs_dir, day: date, n: int) -> None:
    for i in range(n):
        append_record(
            logs_dir, record(i), now=datetime(day.year, day.month, day.day, 9, i, tzinfo=JST)
        )


def test_clean_log_is_read_with_positions(tmp_path):
    write_day(tmp_path, date(2025, 6, 1), 4)
    log = load_audit_log(tmp_path, use_cache=False)
    assert log.records == 4 and log.bad_count == 0 and log.lines == 4
    f = log.frame
    assert list(f.columns) == list(logs.COLUMNS)
    assert f["date"].tolist() == ["2025-06-01"] * 4
    assert f["line"].tolist() == [1, 2, 3, 4] and set(f["file"]) == {"query_2025-06-01.jsonl"}
    assert f["dangerous_operation"].tolist() == [True, False, True, False]
    assert f["latency_sec"].tolist() == [1.0, 2.0, 3.0, 4.0]
    full = read_record(tmp_path / "query_2025-06-01.jsonl", 3)
    assert (
        full.query == "ランサムウェアの隔離手順 2"
        and full.search_results[0].file == "ransomware-isolation.md"
    )
    assert chain_status(log.files)["ok"].tolist() == [True]


def test_corrupt_and_truncated_lines_are_skipped_counted_and_reported(tmp_path):
    write_day(tmp_path, date(2025, 6, 2), 3)
    path = tmp_path / "query_2025-06-02.jsonl"
    with path.open("ab") as fh:
        fh.write(b"\x00\x01\x02 binary\n")  # line 4
        fh.write(b"[1, 2, 3]\n")  # line 5: JSON, not a record
        fh.write(b"\n   \n")  # lines 6-7: blank, ignored
        fh.write(json.dumps({"query": "no timestamp"}).encode() + b"\n")  # line 8
        odd = record(
            9, processing_time_sec="遅い", flags="none", timestamp="2025-06-02T10:00:00+09:00"
        )
        fh.write(json.dumps(odd, ensure_ascii=False).encode() + b"\n")  # line 9: kept, odd types
        fh.write('{"timestamp": "2025-06-02T11:00:00+09:00", "query": "途中で'.encode())  # line 10
    log = load_audit_log(tmp_path, use_cache=False)
    assert log.records == 4
    assert log.bad_count == 4 and log.lines == 8
    reasons = {b.line: b.reason for b in log.bad_lines}
    assert set(reasons) == {4, 5, 8, 10}
    assert reasons[4] == "JSON として読めません"
    assert reasons[5] == "監査レコード（JSON オブジェクト）ではありません"
    assert reasons[8] == "timestamp がありません"
    assert reasons[10] == "行が途中で切れています（書き込みの中断）"
    kept = log.frame.set_index("line")
    assert kept.index.tolist() == [1, 2, 3, 9]
    assert kept.loc[9, "latency_sec"] != kept.loc[9, "latency_sec"]  # NaN, not fatal
    assert not kept.loc[9, "dangerous_operation"]
    status = chain_status([path])
    assert not status["ok"][0] and status["first_bad_line"][0] == 4


def test_windows_keep_good_rows_around_bad_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(logs, "BLOCK_LINES", 4)
    lines = [json.dumps(record(i, timestamp=f"2025-06-03T09:{i:02d}:00+09:00")) for i in range(11)]
    lines[0] = "{broken"
    lines[5] = '{"timestamp": 5}'
    lines[6] = lines[6] + lines[7]  # two objects on one line
    path = tmp_path / "query_2025-06-03.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    read = read_audit_file(path)
    assert read.table.column("line").to_pylist() == [2, 3, 4, 5, 8, 9, 10, 11]
    assert [b.line for b in read.bad_lines] == [1, 6, 7]


CORRUPTIONS = {
    "truncate": lambda s: s[: len(s) // 2],
    "binary": lambda s: "\x00\x01",
    "array": lambda s: "[1, 2]",
    "number_ts": lambda s: re.sub(r'"timestamp": "[^"]*"', '"timestamp": 5', s),
    "no_ts": lambda s: re.sub(r'"timestamp": "[^"]*", ', "", s),
    "odd_type": lambda s: s.replace('"processing_time_sec": ', '"processing_time_sec": "x", "_": '),
    "blank": lambda s: "   ",
    "double": lambda s: s + s,
    "bad_utf8": lambda s: s.replace("隔離", "\udcff"),
}


def reference(text_lines: list[bytes]) -> list[int]:
    """Line numbers a careful per-line reader keeps."""
    kept = []
    for number, raw in enumerate(text_lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        ts = obj.get("timestamp") if isinstance(obj, dict) else None
        if isinstance(ts, str) and re.match(r"^\d{4}-\d{2}-\d{2}", ts):
            kept.append(number)
    return kept


@hsettings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    damage=st.dictionaries(st.integers(0, 24), st.sampled_from(sorted(CORRUPTIONS)), max_size=6),
    cut_tail=st.booleans(),
    block=st.integers(1, 30),
    min_split=st.integers(1, 4),
)
def test_reader_agrees_with_a_per_line_reference(
    tmp_path_factory, damage, cut_tail, block, min_split
):
    lines = [
        json.dumps(record(i, timestamp=f"2025-06-04T09:{i:02d}:00+09:00"), ensure_ascii=False)
        for i in range(25)
    ]
    for i, kind in damage.items():
        lines[i] = CORRUPTIONS[kind](lines[i])
    data = "\n".join(lines).encode("utf-8", "surrogateescape") + (b"" if cut_tail else b"\n")
    if cut_tail:
        data = data[:-7]
    path = tmp_path_factory.mktemp("h") / "query_2025-06-04.jsonl"
    path.write_bytes(data)
    original = logs.BLOCK_LINES, logs.MIN_SPLIT_LINES
    logs.BLOCK_LINES, logs.MIN_SPLIT_LINES = block, min_split
    try:
        read = read_audit_file(path)
    finally:
        logs.BLOCK_LINES, logs.MIN_SPLIT_LINES = original
    expected = reference(data.split(b"\n"))
    assert read.table.column("line").to_pylist() == expected
    nonblank = sum(1 for raw in data.split(b"\n") if raw.strip())
    assert read.lines == nonblank and read.bad_count == nonblank - len(expected)


def test_date_range_cache_and_missing_folders(tmp_path):
    assert load_audit_log(tmp_path / "none").records == 0
    write_day(tmp_path, date(2025, 6, 1), 2)
    write_day(tmp_path, date(2025, 6, 5), 3)
    (tmp_path / "query_notadate.jsonl").write_text("{}\n", encoding="utf-8")
    assert [p.name for p in audit_files(tmp_path)] == [
        "query_2025-06-01.jsonl",
        "query_2025-06-05.jsonl",
    ]
    assert load_audit_log(tmp_path, date(2025, 6, 2), date(2025, 6, 30)).records == 3
    assert load_audit_log(tmp_path).records == 5
    write_day(tmp_path, date(2025, 6, 5), 1)  # the cache notices the change
    assert load_audit_log(tmp_path).records == 6


def test_kpis_over_the_frame(tmp_path):
    write_day(tmp_path, date(2025, 6, 1), 4)
    write_day(tmp_path, date(2025, 6, 2), 2)
    append_record(
        tmp_path,
        record(
            7,
            page="wiki_qa",
            answer_mode="llm",
            token_usage={"total_tokens": 1000},
            cost_usd=0.01,
            flags={"insufficient_evidence": True},
        ),
        now=datetime(2025, 6, 2, 12, tzinfo=JST),
    )
    frame = load_audit_log(tmp_path).frame
    ov = overview(frame)
    assert (
        ov.questions == 7
        and ov.sessions == 3
        and ov.tokens == 1000
        and ov.cost_usd == pytest.approx(0.01)
    )
    assert ov.rates["insufficient_evidence"] == pytest.approx(1 / 7)
    days = daily(frame)
    assert days["date"].tolist() == ["2025-06-01", "2025-06-02"]
    assert days["questions"].tolist() == [4, 3]
    assert days["latency_p50"].tolist()[0] == pytest.approx(2.5)
    assert set(answer_modes(frame)["answer_mode"]) == {"extractive", "llm"}
    wiki = filter_frame(frame, pages=["wiki_qa"])
    assert len(wiki) == 1 and wiki["total_tokens"].iloc[0] == 1000
    assert len(filter_frame(frame, start=date(2025, 6, 2))) == 3


def test_supported_sentence_share_per_day(tmp_path):
    def sentences(*flags: bool) -> list[dict]:
        return [
            {"index": i, "chunk_id": "c", "span": [0, 5], "score": 0.9, "supported": ok}
            for i, ok in enumerate(flags)
        ]

    day1, day2 = datetime(2025, 6, 1, 9, tzinfo=JST), datetime(2025, 6, 2, 9, tzinfo=JST)
    append_record(tmp_path, record(1, sentences=sentences(True, True, False)), now=day1)
    append_record(tmp_path, record(2, sentences=sentences(True)), now=day1)
    append_record(tmp_path, record(3), now=day2)  # a record without a sentence check
    append_record(tmp_path, record(4, sentences=sentences(False, True)), now=day2)
    days = daily(load_audit_log(tmp_path, use_cache=False).frame)
    assert days["sentences_checked"].tolist() == [4, 2]
    assert days["sentences_supported"].tolist() == [3, 1]
    assert days["supported_sentence_share"].tolist() == [0.75, 0.5]
    empty = daily(load_audit_log(tmp_path, date(2025, 6, 2), use_cache=False).frame.head(1))
    assert empty["supported_sentence_share"].isna().all()
