"""The domains data file: four domains, the design's slots and importances, questions, templates."""

from __future__ import annotations

import pytest

from core.errors import InputError
from core.interview.domains import MIN_IMPORTANCE, get_domain, load_domains

EXPECTED = {
    "sop": [
        "objective",
        "prerequisites",
        "environment",
        "steps",
        "branches",
        "validation",
        "rollback",
        "hazards",
        "checklist",
        "references",
    ],
    "postmortem": [
        "summary",
        "impact",
        "detection",
        "timeline",
        "root_cause",
        "contributing_factors",
        "remediation",
        "capa",
        "lessons",
    ],
    "recipe": [
        "basic",
        "ingredients",
        "tools",
        "prep",
        "steps",
        "substitutions",
        "pitfalls",
        "storage",
    ],
    "daily_work": ["subject", "projects", "tasks", "artifacts", "blockers", "next_step"],
}


def test_four_domains_with_the_design_slots():
    catalog = load_domains()
    assert set(catalog.domains) == set(EXPECTED)
    for name, slots in EXPECTED.items():
        assert [s.name for s in catalog.domains[name].slots] == slots


def test_importance_ranges_questions_and_templates():
    for domain in load_domains().domains.values():
        for slot in domain.slots:
            assert slot.importance >= MIN_IMPORTANCE
            if slot.critical:
                assert 0.8 <= slot.importance <= 1.0
            else:
                assert 0.3 <= slot.importance <= 0.6
            assert slot.questions and slot.default_question
        assert "{topic}" in domain.document_title


def test_design_fields():
    pm = get_domain("postmortem")
    assert pm.critical_names == ["summary", "impact", "detection", "timeline", "capa"]
    assert [f.name for f in pm.slot("detection").fields] == ["method", "ttd"]
    assert [f.name for f in pm.slot("capa").fields] == ["action", "owner", "due", "success"]
    recipe = get_domain("recipe")
    assert [f.name for f in recipe.slot("basic").fields] == ["dish", "servings"]
    assert {"name", "amount"} <= {f.name for f in recipe.slot("ingredients").fields}
    assert {"temp", "time", "heat"} <= {f.name for f in recipe.slot("steps").fields}
    daily = get_domain("daily_work")
    assert {"desc", "time_spent", "link"} == {f.name for f in daily.slot("tasks").fields}


def test_unknown_domain_and_broken_file(tmp_path):
    with pytest.raises(InputError) as err:
        get_domain("novel")
    assert "未知のドメイン" in err.value.user_message
    bad = tmp_path / "domains.yaml"
    bad.write_text("version: 1\ndomains:\n  sop: {label: x}\n", encoding="utf-8")
    with pytest.raises(InputError):
        load_domains(bad)
    bad.write_text("::: not yaml", encoding="utf-8")
    with pytest.raises(InputError):
        load_domains(bad)
