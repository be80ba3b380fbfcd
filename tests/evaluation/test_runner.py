"""The runner over a small indexed corpus: results file, summaries, resume, and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from core.errors import InputError
from core.evaluation.dataset import load_dataset
from core.evaluation.results import read_run
from core.evaluation.runner import history_of, run_evaluation
from core.settings import PROJECT_ROOT
from tests.conftest import make_settings
from tests.evaluation.conftest import write_dataset

SHIPPED = PROJECT_ROOT / "eval" / "eval_dataset.json"
# Shipped cases whose runbooks are in the small corpus, one per kind of behaviour.
SHIPPED_IDS = [
    "normal_001",
    "insufficient_001",
    "dangerous_003",
    "ambiguous_001",
    "conversation_001",
]


def small_settings(small_corpus, tmp_path):
    state, books = small_corpus
    return make_settings(state, books).model_copy(update={"state_dir": state})


@pytest.fixture
def subset(tmp_path):
    """The shipped cases of SHIPPED_IDS, as a dataset file of their own."""
    data = json.loads(SHIPPED.read_text(encoding="utf-8"))
    data["test_cases"] = [c for c in data["test_cases"] if c["id"] in SHIPPED_IDS]
    path = tmp_path / "subset.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_history_from_conversation_context():
    dataset, _ = load_dataset(SHIPPED)
    case = next(c for c in dataset.test_cases if c.id == "conversation_001")
    (ex,) = history_of(case.conversation_context)
    assert ex.question == ex.search_query == case.conversation_context[0].content
    assert ex.answer == case.conversation_context[1].content


def test_shipped_cases_pass_through_the_real_pipeline(small_corpus, subset, tmp_path):
    settings = small_settings(small_corpus, tmp_path)
    seen = []
    out = tmp_path / "results.json"
    outcome = run_evaluation(
        settings, subset, progress=lambda d, t, m: seen.append((d, t)), out=out
    )
    run = outcome.run
    assert run.judge == "heuristic" and "ヒューリスティック" in run.judge_label  # no LLM configured
    assert run.status == "completed" and run.answer_mode == "extractive"
    assert seen[0] == (0, 5) and seen[-1] == (5, 5)
    by_id = {r.id: r for r in run.results}
    assert [r.id for r in run.results] == SHIPPED_IDS
    for r in run.results:  # every expectation of these cases holds on the sample runbooks
        assert r.checks_passed, (r.id, [c.detail for c in r.checks if not c.passed])
        assert r.passed and r.scores.average >= 70
    assert by_id["insufficient_001"].refused and by_id["insufficient_001"].answer_mode == "template"
    assert by_id["dangerous_003"].banner == "⚠️ 承認・確認が必要"
    assert by_id["dangerous_003"].answer.startswith("⚠️ 承認・確認が必要")
    assert by_id["conversation_001"].citations[0].file == "ransomware-isolation.md"
    s = run.summary
    assert s.pass_line.passed and s.overall.cases == 5
    assert set(s.by_category) == {
        "normal",
        "insufficient_evidence",
        "dangerous",
        "ambiguous",
        "conversation",
    }
    assert s.refusal.correct_refusal_rate == 1.0 and s.refusal.wrong_refusal_rate == 0.0
    saved = read_run(out)
    assert saved.summary == s and saved.passed
    assert not list(settings.logs_dir.glob("query_*.jsonl"))  # operators' audit log untouched


def test_resume_takes_over_finished_cases(small_corpus, tmp_path):
    settings = small_settings(small_corpus, tmp_path)
    cases = [
        {
            "id": "a",
            "category": "ambiguous",
            "query": "何",
            "expected_flags": {"ambiguous_query": True},
        },
        {
            "id": "b",
            "category": "ambiguous",
            "query": "手順を教えて",
            "expected_flags": {"ambiguous_query": True},
        },
    ]
    dataset = write_dataset(tmp_path / "d.json", cases)
    out = tmp_path / "r.json"
    first = run_evaluation(settings, dataset, "heuristic", out=out)
    # make it look interrupted after the first case
    partial = first.run.model_copy(
        update={"status": "running", "results": first.run.results[:1], "summary": None}
    )
    out.write_text(
        json.dumps(partial.model_dump(mode="json"), ensure_ascii=False), encoding="utf-8"
    )
    again = run_evaluation(settings, dataset, "heuristic", out=out, resume=True)
    assert again.resumed == 1 and [r.id for r in again.run.results] == ["a", "b"]
    assert again.run.status == "completed"


def test_bad_requests_are_japanese_errors(small_corpus, tmp_path):
    settings = small_settings(small_corpus, tmp_path)
    dataset = write_dataset(
        tmp_path / "d.json", [{"id": "a", "category": "ambiguous", "query": "何"}]
    )
    with pytest.raises(InputError, match="LLM が設定されていないため"):
        run_evaluation(settings, dataset, "llm")
    with pytest.raises(InputError, match="データセットにないケース ID"):
        run_evaluation(settings, dataset, "heuristic", case_ids=["zzz"])


def run_cli(args: list[str], state, books) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WB_", "NEO4J_"))}
    env |= {"WB_STATE_DIR": str(state), "WB_RUNBOOKS_DIR": str(books)}
    return subprocess.run(
        [sys.executable, "-m", "core", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_eval_run(small_corpus, subset, tmp_path):
    state, books = small_corpus
    out = tmp_path / "cli.json"
    text = run_cli(
        [
            "eval",
            "run",
            "--dataset",
            str(subset),
            "--judge",
            "heuristic",
            "--case",
            "ambiguous_001",
            "--case",
            "insufficient_001",
            "--out",
            str(out),
        ],
        state,
        books,
    )
    assert text.returncode == 0, text.stderr
    assert "判定方式: ヒューリスティック判定（LLM 不使用）" in text.stdout
    assert "合格ライン（平均 70 点以上のケースが 70% 以上）: 2/2 件" in text.stdout
    assert "拒否の指標: 根拠不足ケースの正しい拒否 1/1" in text.stdout
    assert read_run(out).dataset.cases == 2
    js = run_cli(
        [
            "eval",
            "run",
            "--dataset",
            str(subset),
            "--case",
            "ambiguous_001",
            "--json",
            "--out",
            str(tmp_path / "j.json"),
        ],
        state,
        books,
    )
    assert js.returncode == 0, js.stderr
    payload = json.loads(js.stdout)
    assert payload["judge"] == "heuristic" and payload["summary"]["pass_line"]["passed"]
    bad = run_cli(["eval", "run", "--dataset", str(tmp_path / "missing.json")], state, books)
    assert bad.returncode == 2 and "エラー: 評価データセット" in bad.stderr
