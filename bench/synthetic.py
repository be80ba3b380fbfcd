"""A synthetic ~100k-passage corpus for latency at scale, without tokenizing or embedding 100k texts.

Each synthetic passage takes about half the sentences (at least one) of two random real
paragraphs A and B: its text is title(A) + those sentences, its janome tokens are the
concatenation of the precomputed tokens of title(A) and of each chosen sentence, its vector is
the normalized mean of the real vectors of A and B. The real paragraphs are in the corpus too
(so every question keeps its gold passage). Everything is written through the real
``ChunkStore`` (one transaction) and ``FaissVectorIndex.upsert``, so the real ``Searcher`` runs
over a real 100k store. The passages are deterministic (seeded), so a rerun regenerates the
same texts and vectors in memory and reuses the store when its signature matches.
"""

from __future__ import annotations

import hashlib
import random
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
from tqdm import tqdm

from core.retrieval.corpus import Corpus, CorpusSpec
from core.retrieval.embeddings import Embedder
from core.retrieval.store import vector_key
from core.schemas.documents import Chunk, Document
from core.settings import Settings

from .common import UPDATED_AT

_SENTENCE = re.compile(r"[^。！？!?]+[。！？!?]*")


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.findall(text) if s.strip()]


@dataclass
class SyntheticCorpus:
    corpus: Corpus
    texts: list[str]  # indexed text (title + "\n" + body) of every passage, store order
    vectors: np.ndarray  # (n, dim), same order
    doc_ids: list[str]
    n_real: int
    n_synthetic: int
    reused: bool
    build_seconds: float


def _signature(n_total: int, seed: int, n_real: int) -> str:
    return f"v1/{n_total}/{seed}/{n_real}"


def build_synthetic(
    settings: Settings,
    name: str,
    real: Corpus,
    embedder: Embedder,
    n_total: int = 100_000,
    seed: int = 13,
) -> SyntheticCorpus:
    started = time.perf_counter()
    rows = list(real.store.iter_chunks())
    docs = [real.store.document(r.chunk.doc_id) for r in rows]
    real_texts = [r.chunk.text for r in rows]
    before = embedder.texts_embedded
    real_vecs = embedder.embed_passages(real_texts)  # cache hits: no embedding
    assert embedder.texts_embedded == before, "real passages were not in the embedding cache"

    tok = real.tokenizer
    sents = [sentences(r.chunk.body) for r in rows]
    sent_tokens = [
        tok.tokenize_many(s) for s in tqdm(sents, desc="tokenizing sentences", mininterval=5)
    ]
    title_tokens = [tok.tokenize(r.chunk.title) for r in rows]

    rng = random.Random(seed)
    n_real = len(rows)
    n_syn = max(0, n_total - n_real)
    syn_text: list[str] = []
    syn_tokens: list[list[str]] = []
    syn_vecs = np.empty((n_syn, real_vecs.shape[1]), dtype=np.float32)
    syn_src: list[int] = []
    for i in range(n_syn):
        a, b = rng.sample(range(n_real), 2)
        body_parts: list[str] = []
        tokens = list(title_tokens[a])
        for p in (a, b):
            idx = sorted(rng.sample(range(len(sents[p])), max(1, len(sents[p]) // 2)))
            for j in idx:
                body_parts.append(sents[p][j])
                tokens.extend(sent_tokens[p][j])
        syn_text.append("".join(body_parts))
        syn_tokens.append(tokens)
        v = real_vecs[a] + real_vecs[b]
        syn_vecs[i] = v / (np.linalg.norm(v) or 1.0)
        syn_src.append(a)

    spec = CorpusSpec(
        name=name,
        kind="wiki",
        vector_backend="faiss",
        collection="",
        chunk_size=real.spec.chunk_size,
        chunk_overlap=real.spec.chunk_overlap,
    )
    corpus = Corpus(spec, settings, embedder=embedder)
    signature = _signature(n_total, seed, n_real)
    reused = (
        corpus.store.get_meta("bench_synthetic") == signature
        and corpus.vectors.count() == n_real + n_syn
    )
    syn_titles = [rows[a].chunk.title for a in syn_src]
    syn_chunks = [
        Chunk(
            chunk_id=f"synthetic:{i:06d}_0",
            doc_id=f"synthetic:{i:06d}",
            source=f"jawiki:{syn_titles[i]}",
            title=syn_titles[i],
            heading_path=(),
            body=syn_text[i],
            start=0,
            end=len(syn_text[i]),
            chunk_index=0,
            updated_at=UPDATED_AT,
            doc_hash=hashlib.sha256(syn_text[i].encode("utf-8")).hexdigest(),
        )
        for i in range(n_syn)
    ]
    if not reused:
        corpus.reset()
        corpus = Corpus(spec, settings, embedder=embedder)
        store = corpus.store
        now = datetime.now(tz=UTC).isoformat(timespec="seconds")
        store.begin()
        try:
            for r, doc in zip(rows, docs, strict=True):
                assert doc is not None
                store.put_document(doc, [r.chunk], [r.tokens], len(doc.text.encode()), now)
            for c, t in tqdm(
                zip(syn_chunks, syn_tokens, strict=True),
                total=n_syn,
                desc="writing synthetic store",
                mininterval=5,
            ):
                doc = Document(
                    doc_id=c.doc_id,
                    source=c.source,
                    title=c.title,
                    text=c.body,
                    updated_at=UPDATED_AT,
                    content_hash=c.doc_hash,
                    kind="article",
                )
                store.put_document(doc, [c], [t], len(c.body.encode()), now)
            store.set_meta("generation", str(store.generation + 1))
            store.set_meta("built_at", now)
            store.set_meta("embedder_name", embedder.info.name)
            store.set_meta("embedder_dim", str(embedder.info.dim))
            store.set_meta("chunk_params", f"{spec.chunk_size}/{spec.chunk_overlap}/{tok.name}")
            store.set_meta("bench_synthetic", signature)
            store.commit()
        except BaseException:
            store.rollback()
            raise
        keys = [r.vector_key for r in rows] + [vector_key(c) for c in syn_chunks]
        vecs = np.concatenate([real_vecs, syn_vecs])
        for s in range(0, len(keys), 10_000):
            batch = keys[s : s + 10_000]
            corpus.vectors.upsert(batch, vecs[s : s + 10_000], [{} for _ in batch])
        corpus.vectors.flush()
    _ = corpus.keyword  # build (or load) the BM25 matrix outside the timed queries
    texts = real_texts + [c.text for c in syn_chunks]
    return SyntheticCorpus(
        corpus=corpus,
        texts=texts,
        vectors=np.concatenate([real_vecs, syn_vecs]),
        doc_ids=[r.chunk.doc_id for r in rows] + [c.doc_id for c in syn_chunks],
        n_real=n_real,
        n_synthetic=n_syn,
        reused=reused,
        build_seconds=time.perf_counter() - started,
    )
