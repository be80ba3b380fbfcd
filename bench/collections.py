"""What runbook collections cost a search: a restricted user against ``local``, same run.

    OMP_NUM_THREADS=1 python -m bench.collections

The sample runbooks are copied into two collections (alternate files in ``a/`` and ``b/``, a
manifest giving ``a`` to group ``grp-a``) under ``bench/.cache/``, indexed once, then every
question of eval/evidence_calibration.json is searched and asked three times, warm, as ``local``
(no filter) and as a signed-in operator of ``grp-a`` (half the runbooks). Prints p50/p95 of each
and the ratio restricted/local, the one-off cost of a collection scope (the BM25 index over
the allowed chunks, built on the first search after each rebuild), and the operator's refusals of
questions only a hidden runbook answers beside their ordinary refusals (same latency class).
"""

from __future__ import annotations

import json
import shutil
import statistics
import time
from pathlib import Path

from bench.evidence import CALIBRATION
from core.access import LOCAL, Principal
from core.runbook_chat import ChatConfig, ask
from core.runbooks import index_runbooks, runbook_corpus, search_runbooks
from core.settings import PROJECT_ROOT, Settings

CACHE = Path(__file__).resolve().parent / ".cache"
FOLDER = CACHE / "collections-runbooks"
STATE = CACHE / "collections-state"
OPERATOR = Principal(subject="op", name="op", role="operator", groups=("grp-a",), signed_in=True)
WEIGHTS = {"keyword": 0.6, "semantic": 0.4, "graph": 0.0}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def prepare() -> Settings:
    FOLDER.mkdir(parents=True, exist_ok=True)
    for i, path in enumerate(sorted((PROJECT_ROOT / "data" / "runbooks").iterdir())):
        target = FOLDER / ("a" if i % 2 == 0 else "b") / path.name
        if path.is_file() and not target.exists():
            target.parent.mkdir(exist_ok=True)
            shutil.copy2(path, target)
    (FOLDER / "collections.yaml").write_text("collections:\n  a: [grp-a]\n  b: [grp-b]\n")
    settings = Settings(_env_file=None, state_dir=STATE, runbooks_dir=FOLDER)
    index_runbooks(settings, None)
    return settings


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    settings = prepare()
    data = json.loads(CALIBRATION.read_text(encoding="utf-8"))
    questions = data["answerable"] + data["unanswerable"]
    corpus = runbook_corpus(settings)
    scope_ms = timed(lambda: corpus.scope({"a", "default"}))
    allowed = len(corpus.scope({"a", "default"}).chunk_ids)
    total = corpus.stats()["chunks"]
    figures: dict[str, dict[str, list[float]]] = {}
    for label, who in (("local", LOCAL), ("operator grp-a", OPERATOR)):
        config = ChatConfig(session_id="bench", principal=who, write_audit=False)
        for q in questions:  # warm-up
            ask(q, [], config, settings)
        runs: dict[str, list[float]] = {"search": [], "ask": []}
        for _ in range(3):
            for q in questions:
                search = lambda q=q, who=who: search_runbooks(  # noqa: E731
                    settings, q, limit=4, weights=WEIGHTS, principal=who
                )
                runs["search"].append(timed(search))
                runs["ask"].append(timed(lambda q=q, c=config: ask(q, [], c, settings)))
        figures[label] = runs
    # Refusals: questions only a hidden runbook answers, against ordinary refusals (nothing
    # answers them): the same text, and the same latency class, for the operator.
    local_cfg = ChatConfig(session_id="bench", write_audit=False)
    op_cfg = ChatConfig(session_id="bench", principal=OPERATOR, write_audit=False)
    hidden_only, ordinary = [], []
    for q in questions:
        if not ask(q, [], op_cfg, settings).flags.insufficient_evidence:
            continue
        refused_locally = ask(q, [], local_cfg, settings).flags.insufficient_evidence
        (ordinary if refused_locally else hidden_only).append(q)
    refusal_ms = {
        name: [timed(lambda q=q: ask(q, [], op_cfg, settings)) for _ in range(3) for q in group]
        for name, group in (("hidden-only", hidden_only), ("ordinary", ordinary))
    }
    print(
        f"questions: {len(questions)} x 3 (warm); chunks {total}, of which {allowed} visible to the"
        f" operator; first-search scope build {scope_ms:.1f} ms"
    )
    for what in ("search", "ask"):
        for label, runs in figures.items():
            values = runs[what]
            print(
                f"{what:<7}{label:<16} p50 {statistics.median(values):7.1f} ms"
                f"  p95 {pct(values, 0.95):7.1f} ms"
            )
        ratio = statistics.median(figures["operator grp-a"][what]) / statistics.median(
            figures["local"][what]
        )
        print(f"{what:<7}ratio restricted/local (p50): {ratio:.2f}")
    for name, values in refusal_ms.items():
        count = len(hidden_only if name == "hidden-only" else ordinary)
        if values:
            print(
                f"operator refusals, {name:<12} ({count:2d} questions)"
                f" p50 {statistics.median(values):7.1f} ms  p95 {pct(values, 0.95):7.1f} ms"
            )


if __name__ == "__main__":
    main()
