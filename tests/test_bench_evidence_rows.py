"""bench.evidence reads the grade's inputs from bench.answer_trust runs (--answer-trust)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from bench.evidence import answer_trust_rows
from core import guardrails


def _outcome(category: str, pair: str, **evidence) -> dict:
    base = {
        "probability": 0.9,
        "cosine": 0.88,
        "coverage": 0.5,
        "bm25": 6.0,
        "cross_language": False,
        "translated_coverage": 0.0,
        "margin": 0.03,
        "names_found": True,
        "quantity_found": True,
        "names_in_folder": True,
    }
    return {
        "category": category,
        "pair": pair,
        "answerable": category in ("answerable", "alarming"),
        "evidence": base | evidence,
    }


def test_answer_trust_runs_give_labelled_feature_rows(tmp_path: Path):
    run = {
        "questions_file": "bench/answer_trust_mixed_k.json",
        "outcomes": [
            _outcome("answerable", "ja→ja"),
            _outcome("alarming", "en→ja", cross_language=True, translated_coverage=0.6),
            _outcome("unanswerable", "ja→-", names_in_folder=False),
            _outcome("dangerous", "en→-"),  # scored for the banner, not the grade
            {"category": "answerable", "pair": "ja→en", "answerable": True, "evidence": {}},
        ],
    }
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run, ensure_ascii=False), encoding="utf-8")
    x, y, pairs, groups, ok = answer_trust_rows([path])
    assert y.tolist() == [1.0, 1.0, 0.0]
    assert pairs.tolist() == ["ja->ja", "en->ja", "ja->-"]
    assert set(groups.tolist()) == {"set mixed_k"}
    assert ok.tolist() == [1.0, 1.0, 0.0]  # an absent name refuses whatever the model says
    cross = guardrails.EVIDENCE_FEATURES.index("cross_coverage")
    assert x[1, cross] == 0.6 and x[0, cross] == 0.0
    assert np.isclose(x[0, guardrails.EVIDENCE_FEATURES.index("bm25")], np.log1p(6.0))
