"""Pluggable tokenizers for BM25 over Japanese, English and mixed text: one index holds both.

Two tokenizers share one pre-pass that protects technical tokens and handles English words:

1. The text goes through ``safe_nfkc`` (full-width ASCII becomes ASCII, so ``ＣＶＥ`` and
   ``CVE`` are the same token) and the hyphen and minus variants U+2010-2013, U+2212 and U+FE63
   become ``-`` (PDF extraction writes ``CVE‐2024‐12345`` with U+2010).
2. ``ASCII_TOKEN`` pulls out ASCII runs such as ``CVE-2024-12345``, ``192.0.2.10``,
   ``fs01.corp.example``, ``Get-ADUser``, ``C:\\Windows\\cmd.exe``, ``ADMIN$``, ``4625``, and
   command-line options such as ``-rf`` or ``--force`` (only after a blank or at the start).
   A plain word (ASCII letters only: ``Isolating``, ``EDR``) is English: it is emitted as its
   lowercased Snowball stem (``isol``, ``edr``), or not at all when it is a stop word (``the``,
   ``how``; an all-capitals word such as ``IT`` is an acronym, never a stop word); see
   ``core.text.english``. Any other token is emitted lowercased and whole, not stemmed
   (``cve-2024-12345``, ``4625``, ``log4j``, ``-rf``); a compound token (one with ``-`` ``.``
   ``:`` ``/`` ``@`` ``\\`` inside) also emits its parts that contain a letter, plain-word parts
   stemmed and stop-worded like words, so that ``fs01`` finds ``fs01.corp.example``,
   ``aduser`` finds ``Get-ADUser`` and ``incident response`` finds ``incident-response``
   (numeric parts such as the ``0`` of an IP address are not emitted: they would match
   everything).
3. Only the non-ASCII remainder is given to the Japanese tokenizer, so that janome never splits
   technical tokens (it would cut ``fs01`` into ``fs`` + ``01``) and never sees English words.

``JanomeTokenizer`` emits base forms of content words (see ``CONTENT_POS``), and
``CharBigramTokenizer`` emits character bigrams. ``get_tokenizer`` builds one by name.

A tokenizer's ``version`` changes whenever its output for the same text changes; an index
records ``name`` and ``version`` (``core.ingest.indexer``), so that an index built by an older
version is rebuilt instead of being queried with terms it does not contain. Version 2: English
stemming and stop words.
"""

from __future__ import annotations

import queue
import re
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from core.text.english import is_plain_word, is_stop_word, stem
from core.text.normalize import translation_table

if TYPE_CHECKING:
    from janome.tokenizer import Tokenizer as _JanomeImpl

__all__ = [
    "ASCII_TOKEN",
    "CONTENT_POS",
    "CharBigramTokenizer",
    "JanomeTokenizer",
    "Tokenizer",
    "get_tokenizer",
    "query_terms",
    "tokenizer_names",
]


@runtime_checkable
class Tokenizer(Protocol):
    """What BM25 indexes and queries need: a stable name and a text -> terms function."""

    name: str
    version: int

    def tokenize(self, text: str) -> list[str]: ...

    def tokenize_many(self, texts: Iterable[str]) -> list[list[str]]: ...


# --- the shared ASCII pre-pass ----------------------------------------------------------------

# Hyphen and minus variants that PDF extraction produces inside ids (CVE‐2024‐1234).
_DASHES = "\u2010\u2011\u2012\u2013\u2212\ufe63"

ASCII_TOKEN = re.compile(
    r"""
    (?<![^\s])--?[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*(?![A-Za-z0-9_])  # -rf, --force
    | (?:(?<![^\s])[~.]?/)?                                             # /etc/passwd, ~/x, ./run
      [A-Za-z0-9_]+(?:[-.:/@\\]+[A-Za-z0-9_]+)*\$?                     # words, ids, hosts, paths
    """,
    re.VERBOSE,
)
_ASCII_PART = re.compile(r"[A-Za-z0-9_]*[A-Za-z][A-Za-z0-9_]*")
# A non-ASCII word character (letter, digit or ideograph): a segment without one has no terms.
_NON_ASCII_WORD = re.compile(r"[^\W\x00-\x7f]")


@cache
def _prepare_table() -> dict[int, str | None]:
    table = dict(translation_table())
    table.update(dict.fromkeys(map(ord, _DASHES), "-"))
    return table


def _prepare(text: str) -> str:
    """``safe_nfkc`` (without CR LF handling: line breaks do not matter here) plus dashes."""
    text = text.translate(_prepare_table())
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text


def _word_term(word: str) -> list[str]:
    """A plain English word: its stem, or nothing for a stop word."""
    return [] if is_stop_word(word) else [stem(word)]


def _ascii_terms(token: str) -> list[str]:
    """A plain word's stem; else the lowercased token, then its lettered parts when compound."""
    if is_plain_word(token):
        return _word_term(token)
    lowered = token.lower()
    if lowered.strip("_") == "":
        return []
    terms = [lowered]
    if not lowered.startswith("-") and len(lowered) > 1:
        parts = _ASCII_PART.findall(token)
        if len(parts) > 1 or (parts and parts[0] != token):
            for part in parts:
                if part == token:
                    continue
                terms.extend(_word_term(part) if is_plain_word(part) else [part.lower()])
    return terms


def _ascii_surface(token: str) -> bool:
    """Whether an ASCII token is worth highlighting: not a stop word."""
    return not (is_plain_word(token) and is_stop_word(token))


def _segments(text: str) -> Iterator[tuple[bool, str]]:
    """Split prepared text into (is_ascii_token, piece) in order; pieces without terms are skipped."""
    position = 0
    for match in ASCII_TOKEN.finditer(text):
        if match.start() > position:
            rest = text[position : match.start()]
            if _NON_ASCII_WORD.search(rest):
                yield False, rest
        yield True, match.group()
        position = match.end()
    if position < len(text):
        rest = text[position:]
        if _NON_ASCII_WORD.search(rest):
            yield False, rest


# --- janome ------------------------------------------------------------------------------------

# Content words, by janome (IPADIC) part of speech: major category -> excluded subcategories.
# Nouns except dependent nouns (こと, ため, の), pronouns (これ, 彼) and 特殊 (the そう of そうだ);
# noun suffixes stay (県, 的, 月, 氏: +0.005 R@1 on JSQuAD); independent verbs and adjectives.
# Adverbs, prefixes, adnominals, conjunctions, particles, auxiliaries, symbols and fillers are
# left out: adding adverbs or prefixes changed JSQuAD Recall@1/@5 by less than 0.002 (noise).
CONTENT_POS: dict[str, frozenset[str]] = {
    "名詞": frozenset({"非自立", "代名詞", "特殊"}),
    "動詞": frozenset({"非自立", "接尾"}),
    "形容詞": frozenset({"非自立", "接尾"}),
}

# Base forms written in kana only (する, なる, ある) are too common to be worth highlighting.
_KANA_ONLY = re.compile(r"[\u3041-\u309f\u30a0-\u30ff]+")

# Idle janome Tokenizers, borrowed for one call and given back. janome is not documented as
# thread-safe, so no two threads share one at a time; a pool (not one per thread) because the
# served app runs every rerun in a new thread, and building a Tokenizer costs ~30 ms.
_idle_janome: queue.SimpleQueue[_JanomeImpl] = queue.SimpleQueue()


@contextmanager
def _janome() -> Iterator[_JanomeImpl]:
    try:
        impl = _idle_janome.get_nowait()
    except queue.Empty:
        from janome.tokenizer import Tokenizer as JanomeImpl

        # mmap=True maps the system dictionary instead of loading it: ~0.1 s instead of ~2 s.
        impl = JanomeImpl(mmap=True)
    try:
        yield impl
    finally:
        _idle_janome.put(impl)


def _is_content(part_of_speech: str) -> bool:
    pos = part_of_speech.split(",", 2)
    excluded = CONTENT_POS.get(pos[0])
    return excluded is not None and pos[1] not in excluded


def _janome_words(text: str) -> Iterator[tuple[str, str]]:
    """(surface, base form) of the content words of a non-ASCII segment."""
    with _janome() as janome:
        tokens = list(janome.tokenize(text, wakati=False))
    for token in tokens:
        surface = token.surface
        # janome tags some ASCII symbols ("?") as nouns; real words are never pure ASCII here.
        if _is_content(token.part_of_speech) and _NON_ASCII_WORD.search(surface):
            base = token.base_form
            yield surface, surface if base == "*" else base


class JanomeTokenizer:
    """Base forms of Japanese content words (janome) plus protected, lowercased ASCII tokens."""

    name = "janome"
    version = 2

    def tokenize(self, text: str) -> list[str]:
        terms: list[str] = []
        for is_ascii, piece in _segments(_prepare(text)):
            if is_ascii:
                terms.extend(_ascii_terms(piece))
            else:
                terms.extend(base.lower() for _, base in _janome_words(piece))
        return terms

    def tokenize_many(self, texts: Iterable[str]) -> list[list[str]]:
        return [self.tokenize(text) for text in texts]

    def surface_terms(self, text: str) -> list[str]:
        """Surface forms (and base forms when different) of content words; ASCII tokens as
        written, English stop words left out."""
        terms: list[str] = []
        for is_ascii, piece in _segments(_prepare(text)):
            if is_ascii:
                if _ascii_surface(piece):
                    terms.append(piece)
            else:
                for surface, base in _janome_words(piece):
                    terms.append(surface)
                    if base != surface and not _KANA_ONLY.fullmatch(base):
                        terms.append(base)
        return terms

    def __repr__(self) -> str:
        return "JanomeTokenizer()"


# --- character bigrams -------------------------------------------------------------------------

# Runs of non-ASCII word characters: whitespace, punctuation and symbols end a run.
_NON_ASCII_RUN = re.compile(r"[^\W\x00-\x7f]+")
# One pass over the text: an ASCII token, or (group "run") a run of Japanese characters.
_ASCII_OR_RUN = re.compile(ASCII_TOKEN.pattern + r"| (?P<run>[^\W\x00-\x7f]+)", re.VERBOSE)


class CharBigramTokenizer:
    """Character bigrams of each run of Japanese characters, plus protected ASCII tokens.

    Bigrams never cross whitespace, punctuation or symbols; a one-character run is emitted as a
    unigram so that single-character words (``雨``) are not lost.
    """

    name = "char-bigram"
    version = 2

    def tokenize(self, text: str) -> list[str]:
        terms: list[str] = []
        for match in _ASCII_OR_RUN.finditer(_prepare(text)):
            run = match.group("run")
            if run is None:
                terms.extend(_ascii_terms(match.group()))
            elif len(run) == 1:
                terms.append(run.lower())
            else:
                run = run.lower()
                terms.extend(map(str.__add__, run, run[1:]))
        return terms

    def tokenize_many(self, texts: Iterable[str]) -> list[list[str]]:
        return [self.tokenize(text) for text in texts]

    def surface_terms(self, text: str) -> list[str]:
        """The runs of Japanese characters and the ASCII tokens as written in ``text``,
        English stop words left out."""
        terms: list[str] = []
        for is_ascii, piece in _segments(_prepare(text)):
            if is_ascii:
                if _ascii_surface(piece):
                    terms.append(piece)
            else:
                terms.extend(_NON_ASCII_RUN.findall(piece))
        return terms

    def __repr__(self) -> str:
        return "CharBigramTokenizer()"


# --- factory and query terms -------------------------------------------------------------------

_FACTORIES: dict[str, type[JanomeTokenizer] | type[CharBigramTokenizer]] = {
    JanomeTokenizer.name: JanomeTokenizer,
    CharBigramTokenizer.name: CharBigramTokenizer,
}


def tokenizer_names() -> list[str]:
    """Names accepted by ``get_tokenizer``."""
    return list(_FACTORIES)


def get_tokenizer(name: str) -> Tokenizer:
    """The tokenizer called ``name`` ("janome" or "char-bigram")."""
    factory = _FACTORIES.get(name.strip().lower())
    if factory is None:
        raise ValueError(
            f"unknown tokenizer {name!r}; expected one of: {', '.join(tokenizer_names())}"
        )
    return factory()


# Single kana characters (e.g. the stem み of 見る) would highlight everywhere.
_SINGLE_KANA = re.compile(r"[\u3041-\u309f\u30a0-\u30ff]")


def query_terms(text: str, tokenizer: Tokenizer) -> list[str]:
    """Distinct content terms of a query, in order of first occurrence, for highlighting.

    Highlighting looks for the terms in the evidence text, so surface forms are better than the
    base forms that BM25 indexes. With a tokenizer that has ``surface_terms`` (both built-in
    ones do):

    - janome: the surface form of each content word, followed by its base form when that
      differs and is not written in kana only (``見られる`` gives ``見``, ``見る``; ``削除した``
      gives ``削除``, its base ``する`` being kana only); ASCII tokens as written in the query
      (``Get-ADUser``, ``isolating``), without the lettered parts that BM25 also indexes and
      without English stop words;
    - char-bigram: the runs of Japanese characters (``梅雨の時期は``) and the ASCII tokens.

    Other tokenizers fall back to their ``tokenize`` output. Single kana characters are dropped.
    Deduplication is case-insensitive and keeps the first spelling, so match case-insensitively.
    A plain English word is matched by stem, not spelling (``core.retrieval.searcher.find_offsets``
    and ``core.generation.extractive.term_coverage`` use ``core.text.english``): ``isolate``
    finds ``isolating``.
    """
    surface_terms = getattr(tokenizer, "surface_terms", None)
    raw = surface_terms(text) if callable(surface_terms) else tokenizer.tokenize(text)
    seen: set[str] = set()
    terms: list[str] = []
    for term in raw:
        key = term.lower()
        if not term.strip() or key in seen or _SINGLE_KANA.fullmatch(term):
            continue
        seen.add(key)
        terms.append(term)
    return terms
