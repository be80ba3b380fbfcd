"""LLM answers under a realistic server: time to the first visible token and to the complete
answer (p50/p95) for both pipelines, and the time to the fallback when the server hangs.

    OMP_NUM_THREADS=1 python -m bench.llm [--questions 20] [--hang-budget 5] [--seed 7]

The server is the project's local OpenAI-compatible server (``tests/support/openai_server.py``) on
127.0.0.1: each request waits a uniform 100-800 ms before answering, then streams the reply at
20 tokens/s (a token = 2 characters). The runbook chat asks the answerable questions of
``eval/evidence_calibration.json`` over the sample runbooks; Wikipedia QA asks the questions of the
project's small JSQuAD-format fixture (``tests/support/jsquad_fixture.py``). "First token" is
when ``ask_stream`` yields its first text delta (what ``st.write_stream`` shows); "complete" is
when it yields the final ``Answer`` (citations, checks and the audit record done). The peer in the
same run is the extractive answer (no LLM) of the same questions. The hung server never
answers; the fallback must come within the budget + 1 s.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from core.runbook_chat import ChatConfig
from core.runbook_chat import ask_stream as runbook_stream
from core.runbooks import index_runbooks
from core.schemas.answer import Answer
from core.settings import PROJECT_ROOT, Settings
from core.wiki.index import build_wiki_index
from core.wiki.qa import WikiConfig
from core.wiki.qa import ask_stream as wiki_stream
from tests.support.jsquad_fixture import jsquad_data, write_jsquad
from tests.support.openai_server import OpenAIStub

CACHE = PROJECT_ROOT / "bench" / ".cache"
CALIBRATION = PROJECT_ROOT / "eval" / "evidence_calibration.json"
RUNBOOK_REPLY = (
    "1. 感染が疑われる端末をネットワークから隔離し、EDR で封じ込めます [1]。\n"
    "2. 影響範囲を確認し、責任者へ報告してください [2]。"
)
WIKI_REPLY = "コンテキストによると、その答えは本文に書かれているとおりです [0]。"
TOKENS_PER_SEC = 20.0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed(stream: Iterator[str | Answer]) -> tuple[float | None, float, Answer]:
    """(ms to the first text delta, ms to the final answer, the answer)."""
    t0 = time.perf_counter()
    first = None
    answer = None
    for item in stream:
        if isinstance(item, Answer):
            answer = item
        elif first is None:
            first = (time.perf_counter() - t0) * 1000
    assert answer is not None
    return first, (time.perf_counter() - t0) * 1000, answer


def measure(
    name: str,
    questions: list[str],
    ask: Callable[[str, Settings], Iterator[str | Answer]],
    settings: Settings,
    stub: OpenAIStub,
    rng: random.Random,
) -> None:
    for q in questions[:2]:  # warm-up: models, indexes, the client
        timed(ask(q, settings))
    firsts, totals, modes = [], [], []
    for q in questions:
        stub.queue(delay=rng.uniform(0.1, 0.8), tokens_per_sec=TOKENS_PER_SEC, chunk_chars=2)
        first, total, answer = timed(ask(q, settings))
        modes.append(answer.answer_mode)
        totals.append(total)
        if first is not None:
            firsts.append(first)
    offline = settings.model_copy(update={"openai_base_url": None, "openai_api_key": None})
    extractive = [timed(ask(q, offline))[1] for q in questions]
    print(f"== {name}: {len(questions)} questions, LLM modes {dict(_count(modes))}")
    if firsts:
        print(
            f"first token      p50 {statistics.median(firsts):7.0f} ms  p95 {pct(firsts, 0.95):7.0f} ms"
        )
    print(
        f"complete answer  p50 {statistics.median(totals):7.0f} ms  p95 {pct(totals, 0.95):7.0f} ms"
    )
    print(
        f"extractive peer  p50 {statistics.median(extractive):7.0f} ms  "
        f"p95 {pct(extractive, 0.95):7.0f} ms  (ratio complete/extractive p50 "
        f"{statistics.median(totals) / statistics.median(extractive):.1f})"
    )


def hung(name: str, question: str, ask, settings: Settings, budget: float, trials: int) -> None:
    with OpenAIStub() as stub:
        stub.default.hang = True
        s = settings.model_copy(
            update={"openai_base_url": stub.base_url, "llm_answer_budget_sec": budget}
        )
        times = []
        for _ in range(trials):
            _, total, answer = timed(ask(question, s))
            assert answer.answer_mode != "llm"
            times.append(total / 1000)
    print(
        f"== {name}, hung server (budget {budget:g} s, first token {settings.llm_first_token_sec:g} s): "
        f"fallback after {statistics.median(times):.2f} s p50, {max(times):.2f} s max "
        f"(bound budget + 1 s = {budget + 1:g} s)"
    )


def _count(items: list[str]) -> Iterator[tuple[str, int]]:
    for item in sorted(set(items)):
        yield item, items.count(item)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--hang-budget", type=float, default=5.0)
    parser.add_argument("--hang-trials", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    runbook_state = CACHE / "llm-runbook-state"
    calibration = json.loads(CALIBRATION.read_text(encoding="utf-8"))
    runbook_questions = calibration["answerable"][: args.questions]
    wiki_questions = [
        qa["question"]
        for article in jsquad_data()["data"]
        for paragraph in article["paragraphs"]
        for qa in paragraph["qas"]
    ][: args.questions]
    with tempfile.TemporaryDirectory(prefix="bench-llm-") as tmp:
        base = Settings(_env_file=None, state_dir=runbook_state)
        index_runbooks(base, None)
        wiki_settings = Settings(_env_file=None, state_dir=Path(tmp) / "wiki")
        build_wiki_index(wiki_settings, f"jsquad:{write_jsquad(Path(tmp) / 'jsquad.json')}")

        def ask_runbook(q: str, s: Settings):
            return runbook_stream(q, [], ChatConfig(session_id="bench-llm"), s)

        def ask_wiki(q: str, s: Settings):
            return wiki_stream(q, [], WikiConfig(session_id="bench-llm"), s)

        print(
            f"server: 127.0.0.1, latency uniform 100-800 ms, {TOKENS_PER_SEC:g} tokens/s "
            f"(2 characters each); replies of {len(RUNBOOK_REPLY)} / {len(WIKI_REPLY)} characters"
        )
        with OpenAIStub(default_content=RUNBOOK_REPLY) as stub:
            s = base.model_copy(update={"openai_base_url": stub.base_url})
            measure("runbook chat", runbook_questions, ask_runbook, s, stub, rng)
        with OpenAIStub(default_content=WIKI_REPLY) as stub:
            s = wiki_settings.model_copy(update={"openai_base_url": stub.base_url})
            measure("Wikipedia QA", wiki_questions, ask_wiki, s, stub, rng)
        hung(
            "runbook chat",
            runbook_questions[0],
            ask_runbook,
            base,
            args.hang_budget,
            args.hang_trials,
        )
        hung(
            "Wikipedia QA",
            wiki_questions[0],
            ask_wiki,
            wiki_settings,
            args.hang_budget,
            args.hang_trials,
        )


if __name__ == "__main__":
    main()
