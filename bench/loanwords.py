"""Cost of the loanword index (``core.text.loanwords``): built once per index generation on the
first runbook question, then one lookup per question.

    python -m bench.loanwords                   # passages from the sample runbooks
    WB_DATASETS_DIR=/work/shared/datasets python -m bench.loanwords --dataset runbooks-dev

The passages (450 characters) are repeated up to each size; prints the build time per size and
the time of ``counterparts`` per question beside the glossary's ``cross_language_terms`` on the
same questions (the peer: what every runbook question already pays).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from core.settings import PROJECT_ROOT, Settings
from core.text.glossary import cross_language_terms
from core.text.loanwords import LoanwordIndex

QUESTIONS = (
    "Before promoting the replica during a failover, how do I confirm replication is healthy?",
    "アプライアンスのメモリが足りなくなったらプロセスは強制終了される？",
    "How do I suspend a user from the administrative shell rather than the dashboard?",
    "タイムスタンプとタイムゾーンで注意することは？",
)


def passages(folder: Path, size: int = 450) -> list[str]:
    out = []
    for path in sorted(folder.rglob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        out += [text[i : i + size] for i in range(0, len(text), size)]
    return out


def per_call_ms(fn, repeat: int = 200) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        for q in QUESTIONS:
            fn(q)
    return (time.perf_counter() - started) * 1000 / (repeat * len(QUESTIONS))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", help="a runbook data set under WB_DATASETS_DIR")
    args = parser.parse_args()
    folder = PROJECT_ROOT / "data" / "runbooks"
    if args.dataset:
        settings = Settings(_env_file=None)
        if settings.datasets_dir is None:
            raise SystemExit("--dataset needs WB_DATASETS_DIR")
        folder = settings.dataset_path(args.dataset)
    base = passages(folder)
    print(f"passages from {folder}: {len(base)}")
    index = None
    for size in (1_000, 10_000, 100_000):
        texts = (base * (size // max(1, len(base)) + 1))[:size]
        started = time.perf_counter()
        index = LoanwordIndex(texts)
        elapsed = time.perf_counter() - started
        print(f"  build {size:>7,} passages: {elapsed:6.2f} s ({len(index)} words keyed)")
    assert index is not None
    lookup = per_call_ms(index.counterparts)
    glossary = per_call_ms(cross_language_terms)
    print(
        f"  counterparts per question {lookup:.3f} ms; glossary terms {glossary:.3f} ms"
        f" (ratio {lookup / glossary:.2f})"
    )


if __name__ == "__main__":
    main()
