"""Optional cross-encoder rerank (sentence-transformers), loaded only from a local path or cache.

Offline there is no model: ``load_reranker`` returns ``None`` with the reason, and the searcher
keeps the fused order and records the fallback in its metrics.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Sequence

log = logging.getLogger(__name__)

_cache: dict[str, tuple[object | None, str]] = {}
_lock = threading.Lock()


class CrossEncoderReranker:
    def __init__(self, model: str, batch_size: int = 16) -> None:
        from sentence_transformers import CrossEncoder

        self.model_name = model
        self.batch_size = batch_size
        self._model = CrossEncoder(model, local_files_only=True, device="cpu")

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """Relevance in [0, 1] (sigmoid of the cross-encoder logit) for each text."""
        if not texts:
            return []
        raw = self._model.predict(
            [(query, t) for t in texts], batch_size=self.batch_size, show_progress_bar=False
        )
        return [1.0 / (1.0 + math.exp(-float(x))) for x in raw]


def load_reranker(model: str, batch_size: int = 16) -> tuple[CrossEncoderReranker | None, str]:
    """(reranker, "") when the model loads locally, else (None, reason). Cached per model."""
    with _lock:
        if model not in _cache:
            try:
                _cache[model] = (CrossEncoderReranker(model, batch_size), "")
            except ImportError:
                _cache[model] = (None, "sentence-transformers 未インストール")
            except Exception as exc:  # no local copy, broken files, …
                _cache[model] = (None, f"モデル {model} をローカルで読み込めません")
                log.info("rerank model %s unavailable: %s", model, exc)
        return _cache[model]  # type: ignore[return-value]
