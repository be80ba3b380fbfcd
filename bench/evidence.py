"""Calibrate and measure the runbook chat's evidence grade, per language pair.

    python -m bench.evidence            # error rates of the shipped weights (core/guardrails.py)
    python -m bench.evidence --fit      # refit on the calibration set; weights and held-out error
    WB_DATASETS_DIR=/work/shared/datasets python -m bench.evidence --held-out
                                        # + the PagerDuty translations, with the shipped weights
    WB_DATASETS_DIR=/work/shared/datasets python -m bench.evidence --fit --held-out
                                        # the shipped fit: calibration set + PagerDuty pairs
    python -m bench.evidence --fit --answer-trust runs/*.json
                                        # + the questions of bench.answer_trust runs over
                                        # third-party runbooks (--json), one group per set

On a loaded machine set OMP_NUM_THREADS=1: the query embedding then takes ~0.5 s instead of ~18 s.

Features per question come from the real search, exactly as ``ask()`` computes them
(``core.runbook_chat._grade`` -> ``guardrails.evidence_features``). Labels come from
``eval/evidence_calibration.json``: the Japanese questions over the sample runbooks
(``answerable`` / ``unanswerable``) and the ``cross_language`` groups (a language pair, a corpus
folder of the repository, answerable / unanswerable questions), all written for this project.
Reports, per language pair (question -> passages) and overall, at the 0.5 threshold: answerable
questions refused (false refusal) and unanswerable questions refused, in-sample and
leave-one-out. ``--held-out`` indexes the two PagerDuty copies (Japanese and English
translations of each other) and asks ``bench/evidence_pagerduty.json`` of each (ja->en and
en->ja cross-language, ja->ja and en->en as controls).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core import guardrails
from core.runbook_chat import _grade
from core.runbooks import index_runbooks, search_runbooks
from core.settings import PROJECT_ROOT, Settings

CALIBRATION = PROJECT_ROOT / "eval" / "evidence_calibration.json"
HELD_OUT = PROJECT_ROOT / "bench" / "evidence_pagerduty.json"
STATE = PROJECT_ROOT / "bench" / ".cache" / "evidence-state"


@dataclass
class Group:
    pair: str  # "question language -> passage language"
    data: Path | None  # corpus folder (None: the sample runbooks)
    questions: list[str]
    labels: list[int]  # 1 answerable, 0 unanswerable


def calibration_groups() -> list[Group]:
    d = json.loads(CALIBRATION.read_text(encoding="utf-8"))
    groups = [_group("ja->ja", None, d["answerable"], d["unanswerable"])]
    for g in d.get("cross_language", []):
        data = PROJECT_ROOT / g["corpus"] if g["corpus"] else None
        groups.append(_group(g["pair"], data, g["answerable"], g["unanswerable"]))
    return groups


def held_out_groups(settings: Settings) -> list[Group]:
    d = json.loads(HELD_OUT.read_text(encoding="utf-8"))
    groups = []
    for corpus in ("en", "ja"):
        folder = settings.dataset_path("runbooks-dev", f"pagerduty-{corpus}")
        for lang in ("ja", "en"):
            groups.append(
                _group(
                    f"{lang}->{corpus}",
                    folder,
                    d["answerable"][lang],
                    d["unanswerable"][lang],
                )
            )
    return groups


def answer_trust_rows(paths: list[Path]):
    """Features, labels, pairs and groups from ``python -m bench.answer_trust --json`` outputs:
    the grade's inputs as the real search computed them for each question (answerable and
    alarming 1, unanswerable 0; dangerous requests are scored for the banner, not here), and
    whether the rules beside the model let it pass (names in the passages and in the folder,
    the quantity asked for). One group per question set: its documents are third-party
    runbooks, a set left out is a folder the fit never saw."""
    xs, ys, pairs, groups, ok = [], [], [], [], []
    for path in paths:
        run = json.loads(path.read_text(encoding="utf-8"))
        name = Path(run["questions_file"]).stem.removeprefix("answer_trust_")
        for o in run["outcomes"]:
            e = o.get("evidence") or {}
            if o["category"] == "dangerous" or "cosine" not in e:
                continue
            f = guardrails.evidence_features(
                e["cosine"],
                None if e["cross_language"] else e["coverage"],
                e["bm25"],
                e["translated_coverage"],
                e["margin"],
            )
            xs.append([f[n] for n in guardrails.EVIDENCE_FEATURES])
            ys.append(1.0 if o["answerable"] else 0.0)
            pairs.append(o["pair"].replace("→", "->"))
            groups.append(f"set {name}")
            ok.append(e["names_found"] and e["quantity_found"] and e.get("names_in_folder", True))
    return (
        np.asarray(xs, dtype=np.float64),
        np.asarray(ys),
        np.asarray(pairs),
        np.asarray(groups),
        np.asarray(ok, dtype=np.float64),
    )


def _group(pair: str, data: Path | None, answerable: list[str], unanswerable: list[str]) -> Group:
    return Group(
        pair, data, answerable + unanswerable, [1] * len(answerable) + [0] * len(unanswerable)
    )


def features(settings: Settings, group: Group) -> tuple[np.ndarray, list[bool]]:
    """The model's features per question, and whether the rules beside the model let it pass:
    the question's names are in the passages (``EvidenceGrade.names_found``) and, when it asks
    for a quantity (a price, a period, a count…), one of that kind is
    (``EvidenceGrade.quantity_missing``)."""
    index_runbooks(settings, group.data, check_allowed=False)
    rows, names_ok = [], []
    for q in group.questions:
        outcome = search_runbooks(
            settings,
            q,
            limit=4,
            weights={"keyword": 0.6, "semantic": 0.4, "graph": 0.0},
            data=group.data,
        )
        g = _grade(outcome, settings, group.data)
        rows.append([g.features[name] for name in guardrails.EVIDENCE_FEATURES])
        names_ok.append(g.names_found and not g.quantity_missing)
    return np.asarray(rows, dtype=np.float64), names_ok


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
    """(answerable wrongly refused, unanswerable refused) at the 0.5 threshold."""
    answerable, unanswerable = y == 1, y == 0
    false_refusal = float(np.mean(p[answerable] < 0.5)) if answerable.any() else float("nan")
    refused = float(np.mean(p[unanswerable] < 0.5)) if unanswerable.any() else float("nan")
    return false_refusal, refused


def report(title: str, p: np.ndarray, y: np.ndarray, pairs: np.ndarray) -> None:
    fr, ur = error_rates(p, y)
    print(f"  {title}: answerable wrongly refused {fr:.3f}, unanswerable refused {ur:.3f}")
    for pair in dict.fromkeys(pairs.tolist()):
        m = pairs == pair
        fr, ur = error_rates(p[m], y[m])
        n_a, n_u = int(y[m].sum()), int((1 - y[m]).sum())
        print(
            f"    {pair:7s} ({n_a:2d} answerable, {n_u:2d} unanswerable):"
            f" wrongly refused {fr:.3f}, unanswerable refused {ur:.3f}"
        )


def collect(settings: Settings, groups: list[Group]):
    xs, ys, pairs, qs, ok = [], [], [], [], []
    for g in groups:
        x, names_ok = features(settings, g)
        xs.append(x)
        ok += names_ok
        ys += g.labels
        pairs += [g.pair] * len(g.labels)
        qs += g.questions
    y = np.asarray(ys, dtype=np.float64)
    return np.vstack(xs), y, np.asarray(pairs), qs, np.asarray(ok, dtype=np.float64)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fit", action="store_true")
    parser.add_argument("--held-out", action="store_true")
    parser.add_argument(
        "--answer-trust",
        nargs="+",
        type=Path,
        default=[],
        metavar="RUN.json",
        help="outputs of bench.answer_trust --json over third-party runbooks: their questions "
        "join the fit (one group per set), and are reported with and without the rules",
    )
    args = parser.parse_args()
    settings = Settings(
        _env_file=None, state_dir=STATE, allowed_roots=[PROJECT_ROOT, Path(STATE).parent]
    )
    x, y, pairs, qs, ok = collect(settings, calibration_groups())
    names = guardrails.EVIDENCE_FEATURES
    w_ship = guardrails.EVIDENCE_WEIGHTS
    shipped = np.array([w_ship["bias"], *(w_ship[n] for n in names)])
    print(f"calibration set: {int(y.sum())} answerable, {int((1 - y).sum())} unanswerable")
    print(f"features: {', '.join(names)}")
    for pair in dict.fromkeys(pairs.tolist()):
        for label in (1, 0):
            m = (pairs == pair) & (y == label)
            cells = "  ".join(f"{n} {x[m, i].mean():.3f}" for i, n in enumerate(names))
            print(f"  {pair:7s} {'answerable' if label else 'unanswerable':12s} {cells}")
    print(f"shipped weights {shipped.round(3).tolist()}:")
    report("in-sample", predict(shipped, x), y, pairs)
    report("in-sample, with the names rule", predict(shipped, x) * ok, y, pairs)
    if args.held_out:
        if settings.datasets_dir is None:
            raise SystemExit("--held-out needs WB_DATASETS_DIR (the runbooks-dev data set)")
        dev = Settings(
            _env_file=None,
            state_dir=STATE.parent / "evidence-held-out",
            datasets_dir=settings.datasets_dir,
            allowed_roots=[PROJECT_ROOT, settings.datasets_dir],
        )
        hx, hy, hpairs, hqs, hok = collect(dev, held_out_groups(dev))
        print(f"PagerDuty pairs: {int(hy.sum())} answerable, {int((1 - hy).sum())} unanswerable")
        report("shipped weights", predict(shipped, hx), hy, hpairs)
        report("shipped weights, with the names rule", predict(shipped, hx) * hok, hy, hpairs)
        if args.fit:  # the PagerDuty pairs join the fit (development data)
            x = np.vstack([x, hx])
            y = np.concatenate([y, hy])
            tags = [f"cal {p}" for p in pairs.tolist()] + [f"dev {p}" for p in hpairs.tolist()]
            pairs = np.concatenate([pairs, hpairs])
            qs = qs + hqs
        else:
            misses = [
                f"{hpairs[i]} {hqs[i]}"
                for i in range(len(hy))
                if (predict(shipped, hx[i : i + 1])[0] >= 0.5) != (hy[i] == 1)
            ]
            print("  misclassified:", misses)
    groups = np.asarray(tags if args.fit and args.held_out else [f"cal {p}" for p in pairs])
    if args.answer_trust:
        ax, ay, apairs, agroups, aok = answer_trust_rows(args.answer_trust)
        print(f"answer-trust sets: {int(ay.sum())} answerable, {int((1 - ay).sum())} unanswerable")
        report("shipped weights", predict(shipped, ax), ay, apairs)
        report("shipped weights, with the rules", predict(shipped, ax) * aok, ay, apairs)
        if args.fit:
            x, y = np.vstack([x, ax]), np.concatenate([y, ay])
            pairs, groups = np.concatenate([pairs, apairs]), np.concatenate([groups, agroups])
    if args.fit:
        w = fit_logistic(x, y)
        print(f"fitted weights (bias, {', '.join(names)}): {w.round(2).tolist()}")
        report("in-sample", predict(w, x), y, pairs)
        held = np.zeros(len(y))
        for group in dict.fromkeys(groups.tolist()):  # each group predicted by a fit without it
            out = groups == group
            held[out] = predict(fit_logistic(x[~out], y[~out], steps=5000), x[out])
        report("leave-one-group-out", held, y, pairs)
        if args.answer_trust:
            sets = np.char.startswith(groups.astype(str), "set ")
            report("answer-trust sets, leave-one-set-out", held[sets], y[sets], pairs[sets])
            report(
                "answer-trust sets, leave-one-set-out, with the rules",
                held[sets] * aok,
                y[sets],
                pairs[sets],
            )
            report("own questions, leave-one-group-out", held[~sets], y[~sets], pairs[~sets])


if __name__ == "__main__":
    Path(STATE).mkdir(parents=True, exist_ok=True)
    main()
