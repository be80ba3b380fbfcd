"""Keyword (BM25-only) quality: JSQuAD (Japanese) and a small English check on PagerDuty's docs.

    WB_DATASETS_DIR=/work/shared/datasets .venv/bin/python -m bench.keyword [--tokenizer NAME]

No embedder: chunks are tokenized with the configured tokenizer (``core.text.tokenize``) and
scored with ``KeywordIndex`` (bm25s), exactly as the indexer and the searcher do, so the figures
move only with the tokenizer and the chunker. Sections:

1. JSQuAD (valid v1.3): one passage per paragraph (title + text), and 450/60 article chunks;
   Recall@1/5/10 of the gold paragraph for every question (``normalize_query``d).
2. English: ``runbooks-dev/pagerduty-en`` chunked like runbooks (``runbook_chunk_size`` /
   ``runbook_chunk_overlap``), a handful of English questions written for this check, each
   with the file that answers it; Recall@1/3 and MRR of the right file among the top chunks'
   files. A handful of questions: a check that stemming helps, not a benchmark to tune on.

Both data sets are read from ``WB_DATASETS_DIR`` (``Settings.dataset_path``); a missing one is
skipped with a message.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

from core.ingest.loaders import load_file
from core.retrieval.keyword import KeywordIndex
from core.settings import Settings
from core.text.chunking import chunk_document
from core.text.normalize import normalize_query
from core.text.tokenize import Tokenizer, get_tokenizer, tokenizer_names

from .common import dedupe, gold_rank, load_jsquad, paragraph_document, pid_of_doc, quality

# (question, file that answers it). Written from the pages' headings and first paragraphs,
# in words of our own (inflected forms differ from the text on purpose: "isolating" / "isolate").
ENGLISH_QUESTIONS: tuple[tuple[str, str], ...] = (
    (
        "How do we isolate compromised instances when a security breach is happening?",
        "during_security_incident_response.md",
    ),
    ("What does the scribe write down while the incident call is running?", "training_scribe.md"),
    (
        "Which severity applies when the system is critical and many customers are impacted?",
        "before_severity_levels.md",
    ),
    (
        "Who owns a postmortem and what is the owner responsible for?",
        "after_post_mortem_process.md",
    ),
    ("What should we avoid when writing postmortems?", "after_effective_post_mortems.md"),
    (
        "When should we tell customers publicly about an ongoing outage?",
        "during_external_communication_guidelines.md",
    ),
    ("What are my responsibilities while I am on call?", "oncall_being_oncall.md"),
    (
        "How are alerts prioritized into high and low urgency pages?",
        "oncall_alerting_principles.md",
    ),
    (
        "Why should speakers avoid acronyms and abbreviations on incident calls?",
        "before_call_etiquette.md",
    ),
    ("How is a complex incident split into sub-teams?", "before_complex_incidents.md"),
    ("Which chat command pages the incident commander?", "resources_chatops.md"),
    ("Why is paging every engineer onto the call a bad idea?", "resources_anti_patterns.md"),
    ("How does the crisis team leader declare a crisis?", "crisis_operations.md"),
    ("What does the customer liaison do during incidents?", "training_customer_liaison.md"),
    (
        "What prerequisites must someone meet before becoming an incident commander?",
        "training_incident_commander.md",
    ),
    ("Which follow-up actions follow the resolution of an incident?", "after_after_an_incident.md"),
    ("What counts as a major incident?", "before_what_is_an_incident.md"),
    ("Which departments have people on call besides engineering?", "oncall_whos_oncall.md"),
    (
        "How soon after an incident must the postmortem meeting be scheduled?",
        "after_post_mortem_template.md",
    ),
    ("Who keeps track of timers and supports the incident commander?", "training_deputy.md"),
    (
        "Who notifies internal stakeholders about the current conditions?",
        "training_internal_liaison.md",
    ),
    (
        "What is expected of a subject matter expert who gets paged?",
        "training_subject_matter_expert.md",
    ),
    ("How should crisis leaders apply the company's values?", "crisis_leadership.md"),
    ("How often should crisis simulations and tabletop exercises be run?", "crisis_prework.md"),
    ("What is the difference between an emergency and an emergent issue?", "crisis_terms.md"),
    ("Which PagerDuty notification rules do crisis team members configure?", "crisis_pagerduty.md"),
    ("Where should an organization without any process start?", "getting_started.md"),
)


def _index(texts: Sequence[str], tokenizer: Tokenizer) -> tuple[KeywordIndex, float]:
    t0 = time.perf_counter()
    tokens = tokenizer.tokenize_many(texts)
    seconds = time.perf_counter() - t0
    return KeywordIndex([str(i) for i in range(len(texts))], tokens), seconds


def jsquad(settings: Settings, tokenizer: Tokenizer, limit: int | None) -> dict | None:
    path = settings.dataset_path("jsquad-v1.3", "valid-v1.3.json")
    if path is None:
        print("JSQuAD: not found under WB_DATASETS_DIR, skipped")
        return None
    paragraphs, questions = load_jsquad(path)
    if limit:
        questions = questions[:limit]
    documents = [paragraph_document(p) for p in paragraphs]
    query_tokens = [tokenizer.tokenize(normalize_query(q.text)) for q in questions]
    out = {}
    for level, size, overlap in (
        ("paragraph", 100_000, 0),
        ("chunk450", settings.article_chunk_size, settings.article_chunk_overlap),
    ):
        chunks = [c for d in documents for c in chunk_document(d, size, overlap)]
        index, seconds = _index([c.text for c in chunks], tokenizer)
        pids = [pid_of_doc(c.doc_id) for c in chunks]
        ranks = []
        for q, tokens in zip(questions, query_tokens, strict=True):
            hits = index.search(tokens, 50)
            ranks.append(gold_rank([pids[int(k)] for k, _ in hits], q.pid))
        figures = quality(ranks)
        print(
            f"JSQuAD {level:9s} passages={len(chunks):5d} questions={len(questions)} "
            f"R@1={figures['R@1']:.3f} R@5={figures['R@5']:.3f} R@10={figures['R@10']:.3f} "
            f"(tokenized in {seconds:.1f} s)"
        )
        out[level] = figures
    return out


def english(settings: Settings, tokenizer: Tokenizer) -> dict | None:
    folder = settings.dataset_path("runbooks-dev", "pagerduty-en")
    if folder is None:
        print("pagerduty-en: not found under WB_DATASETS_DIR, skipped")
        return None
    chunks = []
    for path in sorted(Path(folder).glob("*.md")):
        doc, _ = load_file(path, folder, settings.max_file_bytes)
        chunks.extend(
            chunk_document(doc, settings.runbook_chunk_size, settings.runbook_chunk_overlap)
        )
    index, seconds = _index([c.text for c in chunks], tokenizer)
    ranks = []
    for question, gold in ENGLISH_QUESTIONS:
        hits = index.search(tokenizer.tokenize(normalize_query(question)), 50)
        files = dedupe([chunks[int(k)].source for k, _ in hits])
        rank = files.index(gold) + 1 if gold in files else 0
        ranks.append(rank)
        print(f"  rank {rank or '-':>2}  {question}")
    n = len(ranks)
    figures = {
        "R@1": sum(r == 1 for r in ranks) / n,
        "R@3": sum(0 < r <= 3 for r in ranks) / n,
        "MRR": sum(1 / r for r in ranks if r) / n,
        "n": n,
    }
    print(
        f"pagerduty-en chunks={len(chunks)} questions={n} file R@1={figures['R@1']:.3f} "
        f"R@3={figures['R@3']:.3f} MRR={figures['MRR']:.3f} (tokenized in {seconds:.1f} s)"
    )
    return figures


def main(argv: Sequence[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m bench.keyword", description=__doc__)
    parser.add_argument("--tokenizer", default=None, choices=tokenizer_names())
    parser.add_argument("--questions", type=int, default=None, help="JSQuAD questions (all)")
    parser.add_argument("--skip-jsquad", action="store_true")
    args = parser.parse_args(argv)
    settings = Settings(_env_file=None)
    tokenizer = get_tokenizer(args.tokenizer or settings.tokenizer)
    print(f"tokenizer: {tokenizer.name}")
    out = {"english": english(settings, tokenizer)}
    if not args.skip_jsquad:
        out["jsquad"] = jsquad(settings, tokenizer, args.questions)
    return out


if __name__ == "__main__":
    main()
