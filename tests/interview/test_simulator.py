"""Scripted users: every written scenario, the issue's figures, and the CLI."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from core.__main__ import main
from core.errors import InputError
from core.interview.kpi import aggregate
from core.interview.simulator import SCENARIO_DIR, load_scenario, run_scenario

from .conftest import scenario


@pytest.fixture(scope="module")
def results(scenarios):
    return [run_scenario(s) for s in scenarios]


def test_at_least_five_scenarios_per_domain(scenarios):
    counts = Counter(s.domain for s in scenarios)
    assert set(counts) == {"sop", "postmortem", "recipe", "daily_work"}
    assert min(counts.values()) >= 5
    assert len({s.id for s in scenarios}) == len(scenarios)


def test_appendix_g_figure(results):
    g = next(r for r in results if r.scenario == "pm-appendix-g")
    assert g.stop_reason == "kpi_met"
    assert sorted(g.critical_filled) == ["capa", "detection", "impact", "summary", "timeline"]
    assert g.kpis.turn_count <= 7
    assert all(not t.targets_filled_before for t in g.turns)


def test_figures_over_all_scenarios(results):
    assert all(r.kpis.slot_coverage >= 0.85 for r in results)
    domains = aggregate(r.kpis for r in results)
    for d in domains.values():
        assert d.duplicate_rate <= 0.10 and d.qcheck_fail_rate <= 0.15
    share = sum(r.kpis.voi_non_increasing for r in results) / len(results)
    assert share >= 0.8
    assert all(r.kpis.asked_filled == 0 for r in results)


def test_expectations_written_in_the_scenarios(scenarios, results):
    by_id = {r.scenario: r for r in results}
    for s in scenarios:
        r = by_id[s.id]
        if "stop_reason" in s.expect:
            assert r.stop_reason == s.expect["stop_reason"], s.id
        if "max_turns" in s.expect:
            assert r.kpis.turn_count <= s.expect["max_turns"], s.id
        if "contradiction" in s.expect:
            assert any(
                s.expect["contradiction"] + "." in c for t in r.turns for c in t.contradictions
            ), s.id


def test_cli_simulate_json(capsys, scenarios):
    path = scenario(scenarios, "pm-appendix-g").path
    assert (
        main(["interview", "simulate", "--domain", "postmortem", "--scenario", path, "--json"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    (r,) = out["results"]
    assert r["stop_reason"] == "kpi_met" and r["kpis"]["slot_coverage"] == 1.0
    assert r["turns"][0]["question"].startswith("了解しました。")
    assert out["summary"]["postmortem"]["sessions"] == 1


def test_cli_rejects_a_scenario_of_another_domain(capsys, scenarios):
    path = scenario(scenarios, "recipe-curry").path
    assert main(["interview", "simulate", "--domain", "sop", "--scenario", path]) == 2
    assert "一致しません" in capsys.readouterr().err
    with pytest.raises(InputError):
        load_scenario(SCENARIO_DIR / "missing.yaml")
