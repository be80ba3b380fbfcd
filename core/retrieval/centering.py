"""Vector scores across languages: the language of a passage counted out of its rank.

A multilingual embedder keeps a strong language component in every vector: in a folder of both
languages, a passage in the question's language outscores a passage in the other language on
the same subject (an English question about a Japanese product guide meets the vendor's English
overview of the same feature at cosine 0.90, the Japanese page that answers it at 0.84). The
keyword side has its balance (``searcher.language_balance``); this is the vector side's.

In a runbook corpus holding both scripts, each chunk vector loses ``CENTERING`` times the mean
vector of the chunks of its script, and the query ``CENTERING`` times the mean of the chunks of
its own script; the vector ranking reads the cosine of the centered vectors. The raw cosine
stays what the hits report and what the evidence grade reads (it was calibrated on it). A corpus
in one script is not centered: a Japanese question over English runbooks has no Japanese
chunks to take its language's mean from, and the ranking of one script's chunks against each
other is the raw one. Nor is one whose other script has fewer than ``MIN_SCRIPT_CHUNKS`` chunks:
the six code-only chunks of a Japanese folder are no mean of English prose (the mixed folders
measured hold 27 to 778 chunks of each script).

Measured by the top document of the vector ranking alone (``bench.answer_trust`` question sets,
answerable questions; raw → centered at 0.5): four folders of both languages 92/136 → 123/136,
the questions across languages 22/61 → 52/61 and those in one language 70/75 → 71/75; full
centering (1.0) gained as much across languages but lost 6 questions in one language.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

CENTERING = 0.5
SCRIPTS = ("ja", "latin")
MIN_SCRIPT_CHUNKS = 20


@dataclass(frozen=True, slots=True)
class ScriptCentroids:
    """The mean chunk vector of each script of a corpus (empty: one script, not centered)."""

    means: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def applies(self) -> bool:
        return all(s in self.means for s in SCRIPTS)

    def scores(
        self, query: np.ndarray, script: str, vectors: np.ndarray, scripts: Sequence[str]
    ) -> np.ndarray:
        """Cosines of the centered ``query`` (in ``script``) with the centered ``vectors``
        (each in its script of ``scripts``; a chunk of neither script is not shifted)."""
        q = self.shifted(query, script)
        shifts = np.stack([self._mean(s, query) for s in scripts]) if len(scripts) else vectors
        centered = vectors - CENTERING * shifts
        norms = np.linalg.norm(centered, axis=1)
        norms[norms == 0] = 1.0
        return (centered @ q) / norms

    def shifted(self, query: np.ndarray, script: str) -> np.ndarray:
        """``query`` (in ``script``) less ``CENTERING`` times its script's mean, normalized."""
        q = np.asarray(query, dtype=np.float32) - CENTERING * self._mean(script, query)
        return q / (np.linalg.norm(q) or 1.0)

    def _mean(self, script: str, like: np.ndarray) -> np.ndarray:
        mean = self.means.get(script)
        return mean if mean is not None else np.zeros_like(like, dtype=np.float32)


def script_centroids(vectors: np.ndarray, scripts: Sequence[str]) -> ScriptCentroids:
    """The centroids of ``vectors`` by their ``scripts``, when both scripts have at least
    ``MIN_SCRIPT_CHUNKS`` chunks."""
    labels = np.asarray(list(scripts))
    if len(labels) == 0 or not all((labels == s).sum() >= MIN_SCRIPT_CHUNKS for s in SCRIPTS):
        return ScriptCentroids()
    return ScriptCentroids(
        {s: vectors[labels == s].mean(axis=0).astype(np.float32) for s in SCRIPTS}
    )
