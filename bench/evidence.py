"""Calibrate and measure the runbook chat's evidence grade.

    python -m bench.evidence          # error rates of the shipped weights (core/guardrails.py)
    python -m bench.evidence --fit    # refit the logistic weights; prints them and their LOO error

Features per question (from the real search over the sample runbooks, as ``ask()`` computes
them): best raw cosine, query-term coverage of the top 3 passages, best raw BM25. Labels come
from ``eval/evidence_calibration.json`` (answerable / unanswerable, written for this project).
Reports both error rates at the 0.5 threshold: answerable questions refused (false refusal)
and unanswerable questions answered (false answer), in-sample and leave-one-out.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from core import guardrails
from core.runbook_chat import _grade
from core.runbooks import index_runbooks, search_runbooks
from core.settings import PROJECT_ROOT, Settings

CALIBRATION = PROJECT_ROOT / "eval" / "evidence_calibration.json"
STATE = PROJECT_ROOT / "bench" / ".cache" / "evidence-state"


def features(settings: Settings, questions: list[str]) -> np.ndarray:
    rows = []
    for q in questions:
        outcome = search_runbooks(
            settings, q, limit=4, weights={"keyword": 0.6, "semantic": 0.4, "graph": 0.0}
        )
        g = _grade(outcome, settings, None)
        rows.append([g.cosine, g.coverage, math.log1p(g.bm25)])
    return np.asarray(rows, dtype=np.float64)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 0.01, steps: int = 20000) -> np.ndarray:
    """Weights [bias, w...] by gradient descent on standardized features (then unscaled)."""
    mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = (x - mu) / sd
    xb = np.hstack([np.ones((len(z), 1)), z])
    w = np.zeros(xb.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(xb @ w)))
        grad = xb.T @ (p - y) / len(y) + l2 * np.r_[0.0, w[1:]]
        w -= 0.5 * grad
    scaled = w[1:] / sd
    bias = w[0] - float((w[1:] * mu / sd).sum())
    return np.r_[bias, scaled]


def predict(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(w[0] + x @ w[1:])))


def error_rates(p: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    answerable, unanswerable = y == 1, y == 0
    false_refusal = float(np.mean(p[answerable] < 0.5))
    false_answer = float(np.mean(p[unanswerable] >= 0.5))
    return false_refusal, false_answer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fit", action="store_true")
    args = parser.parse_args()
    data = json.loads(CALIBRATION.read_text(encoding="utf-8"))
    settings = Settings(_env_file=None, state_dir=STATE)
    index_runbooks(settings, None)
    qs = data["answerable"] + data["unanswerable"]
    y = np.r_[np.ones(len(data["answerable"])), np.zeros(len(data["unanswerable"]))]
    x = features(settings, qs)

    w_ship = guardrails.EVIDENCE_WEIGHTS
    shipped = np.array([w_ship["bias"], w_ship["cosine"], w_ship["coverage"], w_ship["bm25"]])
    fr, fa = error_rates(predict(shipped, x), y)
    print(f"calibration set: {int(y.sum())} answerable, {int((1 - y).sum())} unanswerable")
    print(
        f"shipped weights {shipped.round(3).tolist()}: false refusal {fr:.3f}, false answer {fa:.3f}"
    )
    for label, idx in (("answerable", y == 1), ("unanswerable", y == 0)):
        cols = x[idx]
        print(
            f"  {label:12s} cosine {cols[:, 0].mean():.3f}±{cols[:, 0].std():.3f}"
            f"  coverage {cols[:, 1].mean():.2f}  log1p(bm25) {cols[:, 2].mean():.2f}"
        )
    if args.fit:
        w = fit_logistic(x, y)
        fr_in, fa_in = error_rates(predict(w, x), y)
        loo = np.zeros(len(y))
        for i in range(len(y)):
            keep = np.arange(len(y)) != i
            loo[i] = predict(fit_logistic(x[keep], y[keep], steps=5000), x[i : i + 1])[0]
        fr_loo, fa_loo = error_rates(loo, y)
        print(f"fitted weights (bias, cosine, coverage, log1p bm25): {w.round(3).tolist()}")
        print(f"  in-sample: false refusal {fr_in:.3f}, false answer {fa_in:.3f}")
        print(f"  leave-one-out: false refusal {fr_loo:.3f}, false answer {fa_loo:.3f}")
        misses = [qs[i] for i in range(len(y)) if (loo[i] >= 0.5) != (y[i] == 1)]
        print("  LOO misclassified:", misses)


if __name__ == "__main__":
    Path(STATE).mkdir(parents=True, exist_ok=True)
    main()
