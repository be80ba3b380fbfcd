"""English words for keyword search: stop words, Snowball stemming, stem-aware term matching.

The tokenizers (``core.text.tokenize``) index a plain ASCII word (letters only) as its Snowball
English stem, lowercased (``Isolating`` and ``isolate`` both give ``isol``), and drop stop words
(``the``, ``is``, ``how`` and the fragments of contractions, ``don`` ``t``, see ``STOP_WORDS``).
A word written in capitals, two letters or more, is an acronym and never a stop word: ``IT`` and
``US`` stay, ``it`` and ``us`` go. Stemming itself ignores case, so a query in lower case finds
a capitalized word.

Highlighting and the answerer's term coverage look for query terms in text: for a plain word
they match whole ASCII words with the same stem (``word_spans``, ``same_stem_in``), so the
query word ``isolate`` marks ``isolating`` in the evidence, and ``log`` does not mark the
inside of ``catalog``.

The stemmer is PyStemmer (the C Snowball library, the one bm25s supports): 0.53 M words/s on
this machine without its cache, against 0.007 M words/s for the pure-Python
``snowballstemmer`` (same stems); see requirements.txt.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator
from functools import lru_cache

__all__ = [
    "PLAIN_WORD",
    "STOP_WORDS",
    "is_plain_word",
    "is_stop_word",
    "same_stem_in",
    "stem",
    "word_spans",
]

# A plain word: ASCII letters only (no digit, no separator): the only tokens that are stemmed.
PLAIN_WORD = re.compile(r"[A-Za-z]+")

# The Snowball English stop word list (snowballstem.org, english/stop.txt), without the
# contracted forms, which our tokens never contain (the apostrophe splits them), plus the
# fragments those contractions leave ("don't" -> "don", "t") and the modals "can", "will".
_STOP_WORDS_TEXT = """
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
she her hers herself it its itself they them their theirs themselves what which who whom
this that these those am is are was were be been being have has had having do does did
doing would should could ought a an the and but if or because as until while of at by for
with about against between into through during before after above below to from up down in
out on off over under again further then once here there when where why how all any both
each few more most other some such no nor not only own same so than too very cannot
can will
s t d ll m re ve don doesn didn isn aren wasn weren hasn haven hadn won wouldn shan
shouldn couldn mustn
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())

_local = threading.local()


def _stemmer():  # -> Stemmer.Stemmer (one per thread: its cache is not documented as safe)
    impl = getattr(_local, "stemmer", None)
    if impl is None:
        import Stemmer

        impl = Stemmer.Stemmer("english")
        _local.stemmer = impl
    return impl


@lru_cache(maxsize=65536)
def _stem_lower(word: str) -> str:
    return _stemmer().stemWord(word)


def stem(word: str) -> str:
    """The Snowball English stem of a plain word, lowercased (``Isolating`` -> ``isol``)."""
    return _stem_lower(word.lower())


def is_plain_word(term: str) -> bool:
    """True for ASCII letters only: the terms that are stemmed and matched by stem."""
    return PLAIN_WORD.fullmatch(term) is not None


def is_stop_word(word: str) -> bool:
    """A stop word written in lower case or capitalized; ``IT`` (2+ capitals) is an acronym."""
    if len(word) > 1 and word.isupper():
        return False
    return word.lower() in STOP_WORDS


def word_spans(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, stem) of every plain ASCII word of ``text`` (maximal runs of letters)."""
    for match in PLAIN_WORD.finditer(text):
        yield match.start(), match.end(), stem(match.group())


def same_stem_in(text: str, terms: Iterable[str]) -> set[str]:
    """The plain-word ``terms`` (as given) that occur in ``text`` as a word with the same stem."""
    wanted: dict[str, list[str]] = {}
    for term in terms:
        if is_plain_word(term):
            wanted.setdefault(stem(term), []).append(term)
    if not wanted:
        return set()
    found: set[str] = set()
    for _, _, word_stem in word_spans(text):
        hit = wanted.get(word_stem)
        if hit:
            found.update(hit)
    return found
