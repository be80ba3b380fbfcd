"""Runbooks that are translations of each other, and the question's language among them.

A SOC folder often holds a vendor's playbook in English beside the team's Japanese translation
of it (the development set's PagerDuty pages are 36 such pairs). Both copies answer a question
equally well, and the multilingual vectors score them nearly alike, so the copy in the other
language comes first about as often as not; an operator who asks in Japanese wants the Japanese
page quoted, a reviewer reading English the English one.

``find_translations`` pairs the documents of one corpus from their chunk vectors:

- Each chunk vector is centered on the mean vector of the chunks in its script. A multilingual
  embedder keeps a strong language component: uncentered, any Japanese chunk is nearer to any
  other Japanese chunk (cosine ~0.97) than to its own English translation (~0.93), and the
  document centroids of a folder differ in the third decimal only.
- Two documents of different scripts align by the mean, over the chunks of each, of the best
  centered cosine in the other (symmetrized): a translation has a counterpart for nearly every
  chunk, a document on a neighbouring topic for a few.
- They are a pair when each is the other's best-aligned document and the alignment reaches
  ``MIN_ALIGNMENT``. Measured on four folders (bench.answer_trust's development set and three
  folders of third-party runbooks in both languages with no translations among them): the 35
  PagerDuty pairs whose copies are in two scripts align at 0.41–0.76, all found, mutually best;
  no other pair of documents aligns above 0.29.

Only a few candidate documents per document (by centered centroid) are aligned chunk by chunk,
so the cost grows with the chunks, not with the square of the documents.

``prefer_question_language`` then re-orders a search's hits: a hit in the other language whose
own translation (the aligned chunk) is a candidate too yields its place to it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from core.retrieval.hits import Hit
from core.text.script import passage_script, same_script

MIN_ALIGNMENT = 0.35
CANDIDATES = 3  # documents per document aligned chunk by chunk
BLOCK = 1024  # documents whose centroid similarities are computed at once


@dataclass(frozen=True, slots=True)
class Translations:
    """Document pairs that translate each other, and each chunk's nearest chunk in the twin."""

    twin_doc: dict[str, str] = field(default_factory=dict)  # both directions
    twin_chunk: dict[str, str] = field(default_factory=dict)  # chunk id -> chunk id in the twin

    def __len__(self) -> int:
        return len(self.twin_doc) // 2


@dataclass(frozen=True, slots=True)
class ChunkVector:
    chunk_id: str
    doc_id: str
    script: str  # "ja" | "latin" | "none" (core.text.script)
    vector: np.ndarray


def _centered(rows: Sequence[ChunkVector]) -> np.ndarray:
    """The chunk vectors, each centered on its script's mean vector, L2-normalized."""
    matrix = np.stack([np.asarray(r.vector, dtype=np.float32) for r in rows])
    scripts = np.array([r.script for r in rows])
    for script in set(scripts.tolist()):
        mask = scripts == script
        matrix[mask] -= matrix[mask].mean(axis=0)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


def find_translations(rows: Sequence[ChunkVector]) -> Translations:
    """The documents of ``rows`` that translate each other (see the module docstring)."""
    rows = [r for r in rows if r.script in ("ja", "latin")]
    if not rows:
        return Translations()
    vectors = _centered(rows)
    by_doc: dict[str, list[int]] = defaultdict(list)
    votes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for i, r in enumerate(rows):
        by_doc[r.doc_id].append(i)
        votes[r.doc_id][r.script] += 1
    # a document's language: the script of most of its chunks
    language = {d: max(v, key=lambda s: (v[s], s)) for d, v in votes.items()}
    docs = sorted(by_doc)
    if len({language[d] for d in docs}) < 2:
        return Translations()
    centroids = np.stack([vectors[by_doc[d]].mean(axis=0) for d in docs])
    centroids /= np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-9)
    groups = {
        script: np.array([i for i, d in enumerate(docs) if language[d] == script])
        for script in ("ja", "latin")
    }

    aligned: dict[tuple[str, str], float] = {}

    def alignment(a: str, b: str) -> float:
        key = (a, b) if a < b else (b, a)
        if key not in aligned:
            sims = vectors[by_doc[a]] @ vectors[by_doc[b]].T
            aligned[key] = float((sims.max(axis=1).mean() + sims.max(axis=0).mean()) / 2)
        return aligned[key]

    best: dict[str, tuple[float, str]] = {}
    for script, own in groups.items():
        other = groups["latin" if script == "ja" else "ja"]
        k = min(CANDIDATES, len(other))
        for start in range(0, len(own), BLOCK):  # bounded memory however many documents
            block = own[start : start + BLOCK]
            near = centroids[block] @ centroids[other].T
            top = np.argpartition(-near, k - 1, axis=1)[:, :k]
            for row, i in enumerate(block):
                a = docs[i]
                best[a] = max((alignment(a, docs[other[j]]), docs[other[j]]) for j in top[row])
    twin_doc: dict[str, str] = {}
    for a, (score, b) in best.items():
        if score >= MIN_ALIGNMENT and best.get(b, (0.0, ""))[1] == a:
            twin_doc[a] = b
    twin_chunk: dict[str, str] = {}
    for a, b in twin_doc.items():
        ia, ib = by_doc[a], by_doc[b]
        nearest = (vectors[ia] @ vectors[ib].T).argmax(axis=1)
        for i, j in zip(ia, nearest, strict=True):
            twin_chunk[rows[i].chunk_id] = rows[ib[int(j)]].chunk_id
    return Translations(twin_doc, twin_chunk)


def _script(hit: Hit) -> str:
    c = hit.chunk
    return passage_script(c.title, c.heading, c.body)


def missing_translations(
    hits: list[Hit], translations: Translations, script: str, top_k: int
) -> dict[str, Hit]:
    """The own translations (mutually aligned chunks) of the first ``top_k`` hits in the other
    script than ``script`` that are no candidates, each with the hit it translates: the search
    adds them (when the asker may see them) so that ``prefer_question_language`` can put the
    passage in the asker's language in the hit's place."""
    if not translations.twin_doc or script not in ("ja", "latin"):
        return {}
    have = {h.chunk.chunk_id for h in hits}
    out: dict[str, Hit] = {}
    for hit in hits[:top_k]:
        if hit.chunk.doc_id not in translations.twin_doc or same_script(script, _script(hit)):
            continue
        twin = translations.twin_chunk.get(hit.chunk.chunk_id)
        if twin and twin not in have and translations.twin_chunk.get(twin) == hit.chunk.chunk_id:
            out.setdefault(twin, hit)
    return out


def prefer_question_language(hits: list[Hit], translations: Translations, script: str) -> None:
    """Re-order ``hits`` in place for a question in ``script``: a hit in the other script whose
    own translation is a candidate too (the chunk aligned with it, and it with that chunk: the
    same text in the question's language) yields to it. The translation takes the hit's score
    and raw scores where it had less (the evidence grade reads the raw ones) and comes before
    any hit of that score; the hit goes after every other candidate, so that a page cites the
    passage once, in the asker's words. Nothing changes without translations."""
    if not translations.twin_doc or script not in ("ja", "latin") or not hits:
        return
    position = {h.chunk.chunk_id: i for i, h in enumerate(hits)}
    raised: set[int] = set()
    demoted: set[int] = set()
    for i, hit in enumerate(hits):
        if hit.chunk.doc_id not in translations.twin_doc or same_script(script, _script(hit)):
            continue
        twin = translations.twin_chunk.get(hit.chunk.chunk_id, "")
        j = position.get(twin)
        if j is None or translations.twin_chunk.get(twin) != hit.chunk.chunk_id:
            continue
        if not same_script(script, _script(hits[j])):
            continue
        if hits[j].combined <= hit.combined:  # a tie goes to the translation
            hits[j].combined = hit.combined
            raised.add(j)
        hits[j].raw = {k: max(v, hit.raw.get(k, v)) for k, v in hits[j].raw.items()}
        demoted.add(i)
    if demoted:
        order = sorted(
            range(len(hits)),
            key=lambda k: (k in demoted, -hits[k].combined, k not in raised, k),
        )
        hits[:] = [hits[k] for k in order]
