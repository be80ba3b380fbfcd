"""Timing for the linear-time checks: the quietest of a few runs, as a machine busy with other
work (a benchmark beside the suite) adds noise to any one run."""

from __future__ import annotations

import time
from collections.abc import Callable


def quietest(run: Callable[[], object], runs: int = 3) -> float:
    """The shortest wall time, in seconds, of ``runs`` calls of ``run``."""
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best
