"""The search contract's engine: ``Searcher.search(SearchQuery) -> SearchResult``.

Each enabled strategy (keyword BM25, semantic vectors, graph mentions) is asked for a candidate
floor (``settings.candidate_floor``, never fewer than offset + limit) with no score threshold;
with ``collections`` given (the principal's runbook collections, ``core.collections``), a chunk
outside them is never a candidate of any strategy: BM25 runs on an index of the allowed chunks
alone (``Corpus.scope``), the vector store filters on the chunk's collection metadata (and the
result is checked against the store), the graph is asked for allowed chunks only, so fusion,
normalization, totalCount, focus, rerank, excerpts and the evidence grade never see a hidden
chunk. Then the lists are fused (weighted min-max by default, RRF on request), then filtered (file ids, date
range on ``updated_at``, ``minRelevance`` on the combined score), optionally re-scored by focus
(``core.retrieval.focus``) and reranked, and cut to offset/limit. A corpus that embeds passage
windows gives each chunk the cosine of its best window. In a runbook corpus of both languages,
a passage in the other script than the question's has its keyword score balanced
(``language_balance``; not when the folder holds its translation), and a passage whose
translation is a candidate yields to it
(``core.retrieval.translations``); a page hit found by keywords alone gets its real cosine. Results carry highlights (offsets of the query terms in the returned text),
context before/after from the source document, and per-strategy metrics.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from core.collections import collection_of
from core.retrieval.centering import ScriptCentroids
from core.retrieval.corpus import CollectionScope, Corpus, chunk_script
from core.retrieval.focus import apply_focus
from core.retrieval.fusion import rrf_fusion, weighted_fusion
from core.retrieval.hits import Hit
from core.retrieval.keyword import KeywordIndex
from core.retrieval.rerank import load_reranker
from core.retrieval.store import StoredChunk, chunk_vector_key
from core.retrieval.translations import missing_translations, prefer_question_language
from core.schemas.search import (
    Highlight,
    HighlightOffset,
    RelevanceScore,
    RerankConfig,
    RRFConfig,
    SearchQuery,
    SearchResult,
    SearchResultContent,
    SearchResultItem,
    SearchResultSources,
    SearchResultType,
    SearchStrategy,
    SearchStrategyMetrics,
    StrategyMetric,
    validate_contract,
)
from core.text.english import is_plain_word, stem, word_spans
from core.text.entities import extract_query_entities
from core.text.glossary import (
    cross_language,
    enough_names,
    missing_names,
    name_variants,
    proper_names,
    squash_name,
)
from core.text.loanwords import LoanwordIndex
from core.text.script import dominant_script, passage_script, same_script
from core.text.tokenize import query_terms

log = logging.getLogger(__name__)

CONTEXT_CHARS = 120
# Windows fetched per wanted chunk when a corpus embeds passage windows (450-character chunks
# in 160-character windows have 3.4 windows on average, rarely more than 6).
WINDOW_FANOUT = 8
STRATEGIES = ("keyword", "semantic", "graph")
# A navigation chunk (a list of links to other pages: a MkDocs index, a wiki hub) names every
# topic and answers none; its fused score is scaled by this before ranking. Measured with
# bench.answer_trust on the development runbooks (the PagerDuty index page won English
# questions over the Japanese copy by listing every English page title).
NAVIGATION_WEIGHT = 0.5
# A runbook question about a named product or organisation ("CrowdStrike Falcon で隔離") wants
# the runbooks that name it: when some of the first NAMED_TOP_K candidates carry at least half of
# the question's names (``core.text.glossary.proper_names``), the candidates of documents with no
# such passage among them are scaled by NAMED_MISS_WEIGHT (the evidence grade refuses when none
# of the cited passages carries the names).
NAMED_TOP_K = 16
NAMED_MISS_WEIGHT = 0.5
# Of the documents carrying enough of the names, those carrying fewer than another: a mild
# preference (``prefer_named``), as a name of the question may be its context ("which Windows
# event log shows a Velociraptor binary run?")
FEWER_NAMES_WEIGHT = 0.85
# A question referring to a document by its name ("the SOC metrics note", 「障害報告の手順書」):
# this many of its terms or more, found in one document's file name and title and in no other's
# as many (``referred_documents``), prefer that document as NAMED_MISS_WEIGHT does.
REFERRED_MIN_TERMS = 2
OTHER_SCRIPT_WEIGHT = 0.3  # see Searcher._across_scripts
# The most a passage in the other script's keyword score is scaled by (``language_balance``).
# Measured with bench.answer_trust (development set, and folders of third-party runbooks in
# both languages): 1.5 left half of the gain on Japanese questions over English pages, and 3
# lost an English question to a Japanese page.
LANGUAGE_BALANCE_CAP = 2.0


@dataclass(slots=True)
class SearchOutcome:
    result: SearchResult
    hits: list[Hit]
    terms: list[str]
    rerank_used: bool = False
    rerank_fallback: str | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    query_vector: np.ndarray | None = None  # reused by answerers (the embedding is the cost)
    generation: int | None = None  # the store generation every hit was read from
    # cosines of the vector candidates, best first: how far the best stands out of the corpus
    vector_cosines: list[float] = field(default_factory=list)
    # the names a runbook question is about (``core.text.glossary.proper_names``)
    names: list[str] = field(default_factory=list)
    # of those, the ones no runbook of the asker's folder carries (``absent_names``)
    absent_names: list[str] = field(default_factory=list)
    # a runbook question's words in the other language: its glossary terms and its loanwords
    # spelled as the runbooks spell them (``core.text.loanwords``)
    translated: list[str] = field(default_factory=list)
    # how many documents the search ran over (the asker's collections): the evidence grade
    # cannot read BM25 of a folder of one or two runbooks as it reads that of a library
    documents: int = 0


def _parse_ts(value: str) -> datetime | None:
    try:
        ts = datetime.fromisoformat(value)
    except ValueError:
        return None
    return ts if ts.tzinfo else ts.replace(tzinfo=UTC)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def find_offsets(text: str, terms: list[str]) -> list[tuple[int, int]]:
    """Non-overlapping (start, end) of every occurrence of the terms, case-insensitive, sorted.

    A plain English word (ASCII letters only) matches every whole word of ``text`` with the
    same Snowball stem (``isolate`` marks ``Isolating``, ``log`` does not mark ``catalog``);
    any other term (Japanese, ``Get-ADUser``, ``4625``) matches as a substring. Longer
    occurrences win over the shorter ones they overlap.
    """
    lowered = text.lower()
    found: list[tuple[int, int]] = []
    stems = {stem(t) for t in terms if is_plain_word(t)}
    if stems:
        found.extend((s, e) for s, e, word_stem in word_spans(text) if word_stem in stems)
    for term in {t.lower() for t in terms if t.strip() and not is_plain_word(t)}:
        start = lowered.find(term)
        while start >= 0:
            found.append((start, start + len(term)))
            start = lowered.find(term, start + len(term))
    spans: list[tuple[int, int]] = []
    for start, end in sorted(found, key=lambda span: (span[0] - span[1], span[0])):
        if all(end <= s or start >= e for s, e in spans):
            spans.append((start, end))
    return sorted(spans)


def make_query(
    text: str,
    *,
    limit: int,
    min_relevance: float = 0.0,
    rerank: bool = False,
    filters: dict[str, object] | None = None,
    **options: object,
) -> SearchQuery:
    """A hybrid ``SearchQuery``, validated by the contract (Japanese messages). No filter but
    ``minRelevance`` unless ``filters`` (JSON names: ``fileIds``, ``dateRange`` …) say otherwise;
    ``options`` are further contract options by their JSON names (``strategies``, ``weights``,
    ``offset`` …)."""
    return validate_contract(
        SearchQuery,
        {
            "text": text,
            "type": "hybrid",
            "embedding": None,
            "filters": {
                "fileIds": None,
                "entityTypes": None,
                "dateRange": None,
                "minRelevance": min_relevance,
                **(filters or {}),
            },
            "options": {"limit": limit, "rerankEnabled": rerank, **options},
        },
    )


@dataclass(slots=True)
class _Rankings:
    """Each strategy's candidates (chunk id, raw score; best first) and its time in ms."""

    rankings: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    times: dict[str, float] = field(default_factory=dict)
    vector: np.ndarray | None = None  # the query embedding, when the semantic strategy ran
    keyword_share: float = 1.0  # share of the query's terms the keyword index knows
    # raw BM25 of the keyword candidates when their order is not by it (``_across_scripts``):
    # the evidence grade reads the raw score it was calibrated on
    keyword_raw: dict[str, float] | None = None
    # raw cosine of the vector candidates when their order is by the centered cosine
    # (``core.retrieval.centering``): the evidence grade and the hits read the raw one
    vector_raw: dict[str, float] | None = None
    # the raw cosines of the raw vector ranking, best first (the evidence grade's margin)
    vector_cosines: list[float] = field(default_factory=list)
    translated: list[str] = field(default_factory=list)  # see SearchOutcome.translated


def wanted_strategies(strategies: Iterable[object], weights: dict[str, float]) -> set[str]:
    """The strategies to run: those asked for; ``hybrid`` adds every strategy that has a
    weight (a zero weight would not change the order)."""
    wanted = {str(s) for s in strategies}
    if SearchStrategy.HYBRID in wanted:
        wanted |= {name for name in STRATEGIES if weights[name] > 0}
    return wanted


KEYWORD_TRUST_SHARE = 0.5


def keyword_trust(known_share: float) -> float:
    """How far to trust the keyword ranking: fully when at least half of the query's terms
    occur in the corpus, less the fewer do. A Japanese question over English runbooks shares
    one Latin word ("Slack", "SEV-1") with them at best; min-max fusion would otherwise give
    that one word's matches the keyword weight whole and drown the multilingual vectors."""
    return min(1.0, max(0.0, known_share) / KEYWORD_TRUST_SHARE)


def fuse(
    rankings: dict[str, list[tuple[str, float]]],
    weights: dict[str, float],
    fusion: str = "weighted",
    rrf: RRFConfig | None = None,
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Combined score per chunk and each strategy's normalized scores: weighted min-max, or
    reciprocal rank fusion when ``fusion == "rrf"``."""
    if fusion == "rrf":
        cfg = rrf or RRFConfig()
        return rrf_fusion(rankings, weights, cfg.k, cfg.normalize_scores)
    return weighted_fusion(rankings, weights)


# what separates the words of a file's path ("nocodb__noco-docs-v2/snapshots.mdx")
_PATH_SEPARATORS = re.compile(r"[/\\_.\-]+")


def named_documents(hits: Sequence[Hit], names: list[str]) -> set[str]:
    """The documents among ``hits`` with passages carrying at least half of ``names``: a
    runbook that names the product is about it, in its other sections too. The file's name is
    read with the passage: a vendor's page seldom repeats the product's name ("Base Snapshots"
    of NocoDB's docs), the folder it is filed under or the file's name says it
    (``nocodb/snapshots.md``, ``CrowdStrike_isolation.pdf``)."""
    return _enough(names_carried(hits, names), names)


def names_carried(hits: Sequence[Hit], names: list[str]) -> dict[str, int]:
    """How many of ``names`` each document's passages among ``hits`` carry, together."""
    carried: dict[str, set[str]] = {}
    for hit in hits:
        found = carried.setdefault(hit.chunk.doc_id, set())
        if len(found) < len(names):
            missing = missing_in_passages(names, [hit])
            found.update(n for n in names if n not in missing)
    return {doc: len(found) for doc, found in carried.items()}


def _enough(carried: dict[str, int], names: list[str]) -> set[str]:
    """The documents of ``carried`` carrying at least half of ``names`` (``enough_names``)."""
    return {doc for doc, count in carried.items() if enough_names(names, names[count:])}


def missing_in_passages(names: Sequence[str], hits: Sequence[Hit]) -> list[str]:
    """The names of ``names`` that none of ``hits`` carries in its text, its document's title
    or its file's name (``named_documents``)."""
    texts = [f"{h.chunk.title}\n{h.chunk.text}" for h in hits]
    missing = missing_names(list(names), texts)
    if not missing:
        return []
    # a file's name is written in any case, with any separators or none: each word of the name
    # inside it ("Compose PostgreSQL" in ``ComposeForPostgreSQL/dashboard-settings.md``)
    sources = {h.chunk.source for h in hits}
    paths = [_PATH_SEPARATORS.sub(" ", source).lower() for source in sources]
    return [
        n
        for n in missing
        if missing_names([n.lower()], paths)  # as written ("composeforpostgresql")
        and not any(_words_in(v, source) for v in name_variants(n) for source in sources)
    ]


def _words_in(name: str, source: str) -> bool:
    """Each word of ``name`` is in the file's name: a word of four letters or more anywhere
    in it, a shorter one ("EKS", "R2") as a part of its own between separators."""
    squashed = squash_name(source)
    parts = set(_PATH_SEPARATORS.sub(" ", source).lower().split())
    words = [squash_name(w) for w in name.split() if squash_name(w)]
    return bool(words) and all(w in squashed if len(w) >= 4 else w in parts for w in words)


# A name checked against the whole folder: letters (and digits) standing as a word of their own
# in the question. A fragment of an identifier ("pg" of pg_dump), a hyphenated value ("Prod-web",
# a policy name of the asker's) or an address is not looked up: runbooks write those otherwise.
_FOLDER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?: [A-Za-z][A-Za-z0-9]*)*")
# Acronyms joined by slashes ("KSK/ZSK", "TCP/UDP") are looked up as their parts, each of which
# the folder must carry (a hostname or a value of the asker's, "prod-web-01", is still not)
_SLASHED_ACRONYMS = re.compile(r"[A-Z][A-Z0-9]{1,7}(?:/[A-Z][A-Z0-9]{1,7})+")


def absent_names(
    names: Sequence[str],
    text: str,
    keyword: KeywordIndex,
    tokenize: Callable[[str], list[str]],
    loanwords: LoanwordIndex | None = None,
) -> list[str]:
    """The names of ``names`` that no runbook of the folder (``keyword``: the asker's index)
    carries in any of their usual forms (``name_variants``), inside a word (KaliLinux), in a
    katakana spelling (``loanwords``) or in its file's name (``KeywordIndex.names_a_key``):
    "certbot" or "Cloudflare R2" over a folder that never mentions them. Only
    names standing as words of their own in ``text`` are looked up (``_FOLDER_NAME``, and
    acronyms joined by slashes, ``_SLASHED_ACRONYMS``); a name's tokens with digits ("R2", "v2")
    are not required, its words are."""
    out = []
    for name in names:
        looked_up = _FOLDER_NAME.fullmatch(name) or _SLASHED_ACRONYMS.fullmatch(name)
        if not looked_up or not _standalone(name, text):
            continue
        found = False
        for variant in name_variants(name):
            tokens = tokenize(variant)
            if not tokens:  # stop words only ("My" of 「My IP」): nothing to look up
                found = True
                break
            # "Cloudflare R2" by its word; "EC2" or "S3" as it is, or as its letters beside a
            # number ("PL2" written "PL 2")
            words = [t for t in tokens if not any(ch.isdigit() for ch in t)] or tokens
            # each word in a runbook's text or in its file's name: "LPI BIND" over
            # lpi-japan__server-text__dns-server-bind.pdf, which writes BIND
            if all(
                keyword.knows(t)
                or keyword.knows(_letters_of(t))
                or keyword.names_a_key(squash_name(t))
                for t in words
            ) or keyword.names_a_key(squash_name(variant)):
                found = True
                break
        if not found and loanwords is not None and loanwords.counterparts(name):
            found = True
        if not found:
            out.append(name)
    return out


def _letters_of(token: str) -> str:
    """A token of two letters or more glued to a number as its letters ("pl2" → "pl": a
    runbook writing "PL 2" indexes pl and 2); any other token as it is ("s3", "2fa")."""
    m = re.fullmatch(r"([a-z]{2,})(\d+)", token)
    return m.group(1) if m else token


# What a question quotes from a configuration: a setting or field written in snake case
# (``autovacuum_vacuum_scale_factor``, ``value_count``, ``AUDIT_LOG_EXCLUDE_ACTIONS``) or a
# configuration or log file (``archives.json``, ``conn.log``). Runbooks copy these as they are.
_IDENTIFIER = re.compile(
    r"(?<![A-Za-z0-9_.-])(?:[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+"
    r"|[A-Za-z0-9][A-Za-z0-9_-]*\.(?:json|ya?ml|conf|cfg|ini|toml|xml|log|properties|env))"
    r"(?![A-Za-z0-9_])"
)


def absent_identifiers(
    text: str, keyword: KeywordIndex, tokenize: Callable[[str], list[str]]
) -> list[str]:
    """The settings and configuration files ``text`` quotes (``_IDENTIFIER``) that no runbook of
    the folder carries: a question about ``value_count`` over runbooks that never write it is
    not answered from their other correlation rules."""
    out = []
    for ident in dict.fromkeys(_IDENTIFIER.findall(text)):
        tokens = tokenize(ident)
        if tokens and not keyword.knows(tokens[0]):
            out.append(ident)
    return out


def _standalone(name: str, text: str) -> bool:
    """``name`` is written in ``text`` as words of their own, not inside an identifier."""
    pattern = rf"(?<![A-Za-z0-9_'’./@-]){re.escape(name)}(?![A-Za-z0-9_'’/@-]|\.[A-Za-z0-9])"
    return re.search(pattern, text) is not None


def prefer_named(hits: list[Hit], names: list[str], top_k: int = NAMED_TOP_K) -> None:
    """Re-rank the first ``top_k`` hits in place so that the documents naming what the question
    names come first (see NAMED_MISS_WEIGHT); nothing changes when none or all of them do. Of
    those, the ones naming fewer of the names than another are scaled by FEWER_NAMES_WEIGHT:
    of two WireGuard guides, the one naming OPNsense answers "OPNsense の WireGuard
    インスタンス", unless the other's passage stands out by more."""
    if not names or not hits:
        return
    carried = names_carried(hits[:top_k], names)
    named = _enough(carried, names)
    _documents_first(hits, named, top_k)
    most = max((carried[doc] for doc in named), default=0)
    fewer = {doc for doc in named if carried[doc] < most}
    if fewer:
        _scale_documents(hits, fewer, top_k, FEWER_NAMES_WEIGHT)


def _documents_first(hits: list[Hit], documents: set[str], top_k: int) -> None:
    """Scale the first ``top_k`` hits of other documents than ``documents`` by
    NAMED_MISS_WEIGHT and re-sort them in place; nothing changes when none or all are theirs."""
    head = hits[:top_k]
    if not documents or all(h.chunk.doc_id in documents for h in head):
        return
    others = {h.chunk.doc_id for h in head} - documents
    _scale_documents(hits, others, top_k, NAMED_MISS_WEIGHT)


def _scale_documents(hits: list[Hit], documents: set[str], top_k: int, weight: float) -> None:
    """Scale the first ``top_k`` hits of ``documents`` by ``weight`` and re-sort them in place."""
    head = hits[:top_k]
    for hit in head:
        if hit.chunk.doc_id in documents:
            hit.combined *= weight
    head.sort(key=lambda h: (-h.combined, h.chunk.chunk_id))
    hits[:top_k] = head


def referred_documents(
    hits: Sequence[Hit], text: str, tokenize: Callable[[str], list[str]]
) -> set[str]:
    """The one document among ``hits`` that ``text`` refers to by its name: the words before a
    noun for a document ("the SOC metrics note", "the PPC guideline controls table",
    「ウイルス対策の管理策一覧」, ``_DOCUMENT_NOUN``), of which at least REFERRED_MIN_TERMS
    terms are in one document's file name and title and in no other's as many
    (``soc-metrics.pdf``, ``controls-ppc-guideline.md`` over ``points-ppc-guideline.md``).
    None when the question names no document, or two share the most ("the incident response
    plan" in a folder of incident response plans)."""
    asked: set[str] = set()
    for m in _DOCUMENT_NOUN.finditer(text):
        # the name is the noun phrase before the noun: after its determiner or particle
        before = _NAME_START.split(text[max(0, m.start() - 40) : m.start()])[-1]
        asked.update(tokenize(before + m.group(0)))
    if len(asked) < REFERRED_MIN_TERMS:
        return set()
    shared: dict[str, int] = {}
    for hit in hits:
        doc = hit.chunk.doc_id
        if doc in shared:
            continue
        stem = _PATH_SEPARATORS.sub(" ", hit.chunk.source.rsplit(".", 1)[0])
        name = tokenize(f"{_CAMEL.sub(' ', stem)}\n{hit.chunk.title}")
        shared[doc] = len(asked.intersection(name))
    most = max(shared.values(), default=0)
    if most < REFERRED_MIN_TERMS:
        return set()
    referred = {doc for doc, n in shared.items() if n == most}
    return referred if len(referred) == 1 else set()


# Nouns an asker names a document by ("the post-mortem template", 「障害対応の手順書」); not
# "page", which names a screen of the product as often ("from the Defender for Cloud page")
_DOCUMENT_NOUN = re.compile(
    r"\b(?:notes?|docs?|documents?|documentation|guides?|guidelines?|playbooks?|"
    r"runbooks?|templates?|checklists?|polic(?:y|ies)|manuals?|tables?|tutorials?|standards?|"
    r"sops?|handbooks?|readmes?|specs?|specifications?|articles?|write-?ups?)\b|"
    r"手順書|マニュアル|テンプレート|ガイドライン|ガイド|規程|規定|チェックリスト|ノート|資料|"
    r"文書|ドキュメント|一覧|基準|方針|プレイブック|ランブック",
    re.IGNORECASE,
)
_NAME_START = re.compile(
    r"[.?!。？！、「」\n]|\b(?:the|a|an|this|that|these|those|our|your|my|their|its)\s+|"
    r"(?<=[ぁ-んァ-ヶー一-龥A-Za-z0-9])[はがをにでともや](?=[ァ-ヶー一-龥A-Za-z0-9]|$)",
    re.IGNORECASE,
)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def prefer_referred(
    hits: list[Hit], text: str, tokenize: Callable[[str], list[str]], top_k: int = NAMED_TOP_K
) -> None:
    """Re-rank the first ``top_k`` hits in place so that the document the question refers to
    by its name (``referred_documents``) comes first, as ``prefer_named`` does."""
    _documents_first(hits, referred_documents(hits[:top_k], text, tokenize), top_k)


def language_balance(
    keyword: KeywordIndex, tokens: list[str], translated: list[str], script: str
) -> float:
    """How much to scale the keyword score of a passage in the other script than the
    question's, in a folder of both languages: the IDF mass of the question's tokens (what a
    passage in its own script can match) over that of the tokens a passage in the other
    script can match (the translations, and the question's words in that script: names,
    commands), at least 1 and at most LANGUAGE_BALANCE_CAP. A Japanese question's own words
    match a Japanese page on a neighbouring topic, while the English page that answers can
    match only the few words the glossary translates, and lost to it."""
    if script not in ("ja", "latin"):
        return 1.0
    other = set(translated) | {t for t in tokens if dominant_script(t) not in (script, "none")}
    idf = keyword.idf([*tokens, *other])
    same_mass = sum(idf.get(t, 0.0) for t in set(tokens))
    other_mass = sum(idf.get(t, 0.0) for t in other)
    if other_mass <= 0:
        return 1.0  # nothing to match there: the passages of the other script score nothing
    return min(LANGUAGE_BALANCE_CAP, max(1.0, same_mass / other_mass))


def _translated_docs(twin_doc: dict[str, str], scope: CollectionScope | None) -> Collection[str]:
    """The documents whose translation the asker may see (``Translations.twin_doc``): a page
    whose copy is in a hidden collection is the asker's only copy and keeps its balance."""
    if scope is None:
        return twin_doc.keys()  # no copy per search
    return {doc for doc, twin in twin_doc.items() if collection_of(twin) in scope.collections}


class Searcher:
    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus

    def search(self, query: SearchQuery, **kwargs) -> SearchResult:
        return self.run(query, **kwargs).result

    def run(
        self,
        query: SearchQuery,
        fusion: str = "weighted",
        rrf: RRFConfig | None = None,
        rerank: RerankConfig | None = None,
        focus_weight: float = 0.0,
        focus_top_k: int = 16,
        collections: Collection[str] | None = None,
    ) -> SearchOutcome:
        """Search; ``focus_weight`` > 0 re-scores the fused top ``focus_top_k`` by focus
        (``core.retrieval.focus``) before the optional rerank. ``collections`` (None: all)
        restricts every strategy to the chunks of those runbook collections."""
        # One generation for the whole search: a build that commits meanwhile is seen by the
        # next search, never by half of this one.
        with self.corpus.store.snapshot() as generation:
            return self._run(
                query, fusion, rrf, rerank, focus_weight, focus_top_k, collections, generation
            )

    def _run(
        self,
        query: SearchQuery,
        fusion: str,
        rrf: RRFConfig | None,
        rerank: RerankConfig | None,
        focus_weight: float,
        focus_top_k: int,
        collections: Collection[str] | None,
        generation: int,
    ) -> SearchOutcome:
        started = time.perf_counter()
        scope = None if collections is None else self.corpus.scope(collections)
        opts = query.options
        weights = {
            "keyword": opts.weights.keyword,
            "semantic": opts.weights.semantic,
            "graph": opts.weights.graph,
        }
        wanted = wanted_strategies(opts.strategies, weights)
        floor = max(self.corpus.settings.candidate_floor, opts.offset + opts.limit)
        ranked = self._rank(query, wanted, floor, scope, generation)
        if self.corpus.spec.kind == "runbook":  # one index for runbooks in both languages
            weights["keyword"] *= keyword_trust(ranked.keyword_share)
        combined, normalized = fuse(ranked.rankings, weights, fusion, rrf)
        raw = {name: dict(r) for name, r in ranked.rankings.items()}
        if ranked.keyword_raw is not None:
            raw["keyword"] = ranked.keyword_raw
        if ranked.vector_raw is not None:
            raw["semantic"] = ranked.vector_raw
        hits = self._hits(combined, normalized, raw)
        if scope is not None:  # every strategy filtered already; the store has the last word
            hits = [h for h in hits if h.chunk.collection in scope.collections]
        candidates = self._filter(hits, query)
        names = proper_names(query.text) if self.corpus.spec.kind == "runbook" else []
        prefer_named(candidates, names)
        if self.corpus.spec.kind == "runbook" and "keyword" in wanted:  # a lexical match
            prefer_referred(candidates, query.text, self.corpus.tokenizer.tokenize)
        absent: list[str] = []
        if self.corpus.spec.kind == "runbook":  # what no runbook of the asker's folder carries
            keyword = self.corpus.keyword_at(generation) if scope is None else scope.keyword
            tokenize = self.corpus.tokenizer.tokenize
            if names:
                loanwords = self.corpus.loanwords_at(generation, scope)
                absent = absent_names(names, query.text, keyword, tokenize, loanwords)
            absent += absent_identifiers(query.text, keyword, tokenize)
        if self.corpus.spec.kind == "runbook" and "semantic" in wanted:
            # a page and its translation answer alike: the question's language comes first
            translations = self.corpus.translations_at(generation)
            script = dominant_script(query.text)
            wanted_twins = missing_translations(
                candidates, translations, script, opts.offset + opts.limit
            )
            candidates += self._translation_hits(wanted_twins, query, scope)
            prefer_question_language(candidates, translations, script)

        terms = query_terms(query.text, self.corpus.tokenizer)
        outcome = SearchOutcome(  # type: ignore[arg-type]
            result=None,
            hits=[],
            terms=terms,
            names=names,
            translated=ranked.translated,
            absent_names=absent,
        )
        outcome.query_vector, outcome.generation = ranked.vector, generation
        if self.corpus.spec.kind == "runbook":  # what the runbook evidence grade reads
            outcome.documents = (
                scope.documents if scope is not None else self.corpus.store.document_count()
            )
        outcome.vector_cosines = ranked.vector_cosines
        apply_focus(candidates, query.text, focus_weight, focus_top_k)
        if opts.rerank_enabled:
            self._rerank(query.text, candidates, rerank or RerankConfig(), outcome)

        page = candidates[opts.offset : opts.offset + opts.limit]
        if ranked.vector is not None:
            self._fill_cosines(page, ranked.vector)
        items = self._items(page, terms, opts.include_highlights)
        metrics = SearchStrategyMetrics(
            **{name: _metric(name, wanted, ranked, normalized) for name in STRATEGIES}
        )
        elapsed = (time.perf_counter() - started) * 1000
        outcome.result = SearchResult(
            query=query,
            results=items,
            total_count=len(candidates),
            processing_time=elapsed,
            strategies=metrics,
        )
        outcome.hits = page
        outcome.timings_ms = {**ranked.times, "total": elapsed}
        return outcome

    # --- steps -----------------------------------------------------------------------
    def _rank(
        self,
        query: SearchQuery,
        wanted: set[str],
        floor: int,
        scope: CollectionScope | None,
        generation: int,
    ) -> _Rankings:
        """Ask each wanted strategy for its ``floor`` best chunks (of ``scope``), timing each."""
        corpus = self.corpus
        ranked = _Rankings()
        if "keyword" in wanted:
            t0 = time.perf_counter()
            tokens = corpus.tokenizer.tokenize(query.text)
            # a scope's own index: hidden chunks weigh on neither the scores nor the known share
            keyword = corpus.keyword_at(generation) if scope is None else scope.keyword
            if corpus.spec.kind == "runbook":  # runbooks come in both languages
                surfaces, ranked.translated = self._translations(query.text, generation, scope)
                translated = corpus.tokenizer.tokenize(" ".join(ranked.translated))
                own = set(corpus.tokenizer.tokenize(" ".join(surfaces)))
                ranked.rankings["keyword"], ranked.keyword_raw = self._across_scripts(
                    keyword,
                    tokens,
                    translated,
                    own,
                    floor,
                    script=dominant_script(query.text),
                    translated_docs=_translated_docs(
                        self.corpus.translations_at(generation).twin_doc, scope
                    ),
                )
                tokens += translated
            else:
                ranked.rankings["keyword"] = keyword.search(tokens, floor)
            ranked.keyword_share = keyword.known_share(tokens)
            ranked.times["keyword"] = (time.perf_counter() - t0) * 1000
        if "semantic" in wanted:
            t0 = time.perf_counter()
            if query.embedding is not None:
                vec = np.asarray(query.embedding, dtype=np.float32)
                vec = vec / (np.linalg.norm(vec) or 1.0)
            else:
                vec = corpus.embedder.embed_query_vector(query.text)
            ranked.vector = vec
            ranking = self._vector_ranking(vec, floor, scope)
            ranked.vector_cosines = [score for _, score in ranking]
            if corpus.spec.kind == "runbook" and corpus.spec.vector_window == 0:
                centroids = corpus.centroids_at(generation)
                if centroids.applies:  # a folder of both languages
                    ranking, ranked.vector_raw = self._centered_ranking(
                        ranking, vec, dominant_script(query.text), centroids, floor, scope
                    )
            ranked.rankings["semantic"] = ranking
            ranked.times["semantic"] = (time.perf_counter() - t0) * 1000
        if "graph" in wanted:
            t0 = time.perf_counter()
            entities = extract_query_entities(query.text)
            allowed = None if scope is None else scope.chunk_ids
            found = corpus.graph.search(entities, floor, allowed) if entities else []
            ranked.rankings["graph"] = found
            ranked.times["graph"] = (time.perf_counter() - t0) * 1000
        return ranked

    def _translations(
        self, text: str, generation: int, scope: CollectionScope | None
    ) -> tuple[list[str], list[str]]:
        """(the question's words that have a spelling in the other language, those spellings):
        the glossary's terms, then the loanwords of the corpus that sound like a word of the
        question the glossary does not translate ("replica" → レプリカ, メモリ → "memory")."""
        surfaces, translations = cross_language(text)
        # a word the glossary translates already ("security" of "security incident", セキュリティ
        # of セキュリティインシデント) is not looked up again
        covered_words = {w for surface in surfaces for w in surface.split()}
        covered_text = "".join(surfaces)
        found = self.corpus.loanwords_at(generation, scope).counterparts(text)
        for word, spellings in found.items():
            lowered = word.lower()
            if lowered not in (covered_words if lowered.isascii() else covered_text):
                surfaces.append(word)
                translations.extend(spellings)
        return surfaces, list(dict.fromkeys(translations))

    def _across_scripts(
        self,
        keyword: KeywordIndex,
        tokens: list[str],
        translated: list[str],
        own: set[str],
        floor: int,
        script: str,
        translated_docs: Collection[str] = (),
    ) -> tuple[list[tuple[str, float]], dict[str, float] | None]:
        """BM25 over the question's tokens and their glossary translations, where a word the
        glossary translates counts OTHER_SCRIPT_WEIGHT as much in a passage of the other
        language: "call" or "incident" in a Japanese page is a channel name, a URL or a
        placeholder, and the page that answers carries their translation (コール, インシデント),
        which the query holds too. Words without a translation (names, "etcd") count fully.
        A passage in the other script then has its score scaled by ``language_balance``,
        unless its document is one of ``translated_docs`` (it has a translation in the folder,
        ``core.retrieval.translations``): the balance lets a page only the other language has
        compete, while a page the asker's language has too is found by its own words in that
        copy. Balanced, the Japanese copy of the PagerDuty pages outranked the English original
        for English questions on the words the glossary translates, and the page that answered
        (NIST's, in English only) fell out of the keyword candidates.
        Returns the ranking and, when it is not by raw BM25, the raw BM25 of its candidates."""
        balance = language_balance(keyword, tokens, translated, script)
        if not translated and balance == 1.0:
            return keyword.search(tokens, floor), None
        incidental = [t for t in tokens if t in own]
        if not incidental and balance == 1.0:
            return keyword.search(tokens + translated, floor), None
        rest = [t for t in tokens if t not in own] + translated
        main, extra = keyword.scores(rest), keyword.scores(incidental)
        total = main + extra
        if not len(total):
            return [], None
        n = min(len(total), floor * 2)
        top = [i for i in np.argsort(-total, kind="stable")[:n] if total[i] > 0]
        stored = self.corpus.store.chunks_by_id([keyword.keys[i] for i in top])
        scored = []
        for i in top:
            key = keyword.keys[i]
            item = stored.get(key)
            c = item.chunk if item is not None else None
            same = c is None or same_script(script, passage_script(c.title, c.heading, c.body))
            scale = 1.0 if c is not None and c.doc_id in translated_docs else balance
            score = (
                main[i] + extra[i] if same else scale * (main[i] + OTHER_SCRIPT_WEIGHT * extra[i])
            )
            scored.append((key, float(score), float(total[i])))
        scored.sort(key=lambda kv: -kv[1])
        kept = scored[:floor]
        return [(key, score) for key, score, _ in kept], {key: raw for key, _, raw in kept}

    def _hits(
        self,
        combined: dict[str, float],
        normalized: dict[str, dict[str, float]],
        raw: dict[str, dict[str, float]],
    ) -> list[Hit]:
        """The fused chunks still in the store, best first (ties by chunk id)."""
        stored = self.corpus.store.chunks_by_id(list(combined))
        scores = {
            cid: score * (NAVIGATION_WEIGHT if stored[cid].chunk.navigation else 1.0)
            for cid, score in combined.items()
            if cid in stored
        }
        order = sorted(scores, key=lambda cid: (-scores[cid], cid))
        return [self._hit(stored[c], scores[c], normalized, raw) for c in order]

    def _items(
        self, page: list[Hit], terms: list[str], with_highlights: bool
    ) -> list[SearchResultItem]:
        # one read per source document, however many of its chunks are on the page
        docs = {d: self._doc_text(d) for d in dict.fromkeys(h.chunk.doc_id for h in page)}
        return [self._item(h, terms, with_highlights, docs[h.chunk.doc_id]) for h in page]

    def _vector_ranking(
        self, vec: np.ndarray, floor: int, scope: CollectionScope | None = None
    ) -> list[tuple[str, float]]:
        """The ``floor`` live chunks nearest to ``vec`` (of ``scope``), best first, with their
        cosine.

        A corpus that embeds passage windows scores each chunk by its best window; enough
        windows are fetched for ``floor`` distinct chunks at the usual window count.

        Vectors that are not live (left by an interrupted build until the next one collects
        them) are dropped *before* ranking: the index is asked again for more until ``n`` live
        vectors are in hand or it has no more, so that stale vectors never take a live
        candidate's place and the ranking equals that of a clean build.
        """
        corpus = self.corpus
        n = (floor + 16) * (WINDOW_FANOUT if corpus.spec.vector_window > 0 else 1)
        asked = n
        where = None if scope is None else scope.collections
        live: dict[str, StoredChunk] = {}
        while True:
            hits = corpus.vectors.query(vec, asked, where)
            # (window keys are mapped even when the settings changed since the build)
            wanted = [k for k in dict.fromkeys(chunk_vector_key(k) for k, _ in hits)]
            found = corpus.store.chunks_by_vector_key([k for k in wanted if k not in live])
            if scope is not None:  # the store has the last word on the collection
                found = {k: sc for k, sc in found.items() if sc.chunk.chunk_id in scope.chunk_ids}
            live.update(found)
            live_hits = [(k, s) for k, s in hits if chunk_vector_key(k) in live]
            if len(live_hits) >= n or len(hits) < asked:
                break
            asked = min(
                asked * 2 + (asked - len(live_hits)), max(asked + 1, corpus.vectors.count())
            )
        best: dict[str, float] = {}
        for key, score in live_hits[:n]:  # best first: the first window is the chunk's best
            best.setdefault(chunk_vector_key(key), score)
        ranking = [(live[k].chunk.chunk_id, max(0.0, s)) for k, s in best.items()]
        return ranking[:floor]

    def _centered_ranking(
        self,
        ranking: list[tuple[str, float]],
        vec: np.ndarray,
        script: str,
        centroids: ScriptCentroids,
        floor: int,
        scope: CollectionScope | None,
    ) -> tuple[list[tuple[str, float]], dict[str, float]]:
        """The vector candidates ranked by their centered cosine (``core.retrieval.centering``),
        and the raw cosine of each. The candidates are the raw ones and those nearest to the
        query moved away from its language's mean, where the other language's passages rank."""
        shifted = centroids.shifted(vec, script)
        ids = list(
            dict.fromkeys(
                [cid for cid, _ in ranking]
                + [cid for cid, _ in self._vector_ranking(shifted, floor, scope)]
            )
        )
        stored = self.corpus.store.chunks_by_id(ids)
        found = self.corpus.vectors.vectors([stored[c].vector_key for c in ids if c in stored])
        ids = [c for c in ids if c in stored and stored[c].vector_key in found]
        if not ids:
            return ranking, dict(ranking)
        matrix = np.stack([found[stored[c].vector_key] for c in ids]).astype(np.float32)
        scripts = [chunk_script(stored[c].chunk) for c in ids]
        centered = centroids.scores(vec, script, matrix, scripts)
        raw = {c: max(0.0, float(s)) for c, s in zip(ids, matrix @ vec, strict=True)}
        order = sorted(zip(ids, centered, strict=True), key=lambda x: -x[1])[:floor]
        return [(c, max(0.0, float(s))) for c, s in order], raw

    def _translation_hits(
        self, wanted: dict[str, Hit], query: SearchQuery, scope: CollectionScope | None
    ) -> list[Hit]:
        """The chunks of ``wanted`` (translations of hits, by chunk id) as hits with the
        scores of the hit each translates, if the asker may see them and they pass the
        query's filters."""
        if not wanted:
            return []
        stored = self.corpus.store.chunks_by_id(list(wanted))
        out = []
        for chunk_id, hit in wanted.items():
            sc = stored.get(chunk_id)
            if sc is None or (scope is not None and sc.chunk.chunk_id not in scope.chunk_ids):
                continue
            out.append(
                Hit(sc, combined=hit.combined, normalized=dict(hit.normalized), raw=dict(hit.raw))
            )
        return self._filter(out, query) if out else out

    def _fill_cosines(self, page: list[Hit], vec: np.ndarray) -> None:
        """The raw cosine of the hits that were no vector candidate (found by keyword alone):
        their cosine is unknown, not zero, and the evidence grade reads the page's best one."""
        if self.corpus.spec.vector_window > 0:  # a chunk's cosine is that of its best window
            return
        missing = [h for h in page if h.raw["cosine"] <= 0.0]
        if not missing:
            return
        found = self.corpus.vectors.vectors([h.stored.vector_key for h in missing])
        for h in missing:
            v = found.get(h.stored.vector_key)
            if v is not None:
                h.raw["cosine"] = max(0.0, float(np.dot(vec, v)))

    @staticmethod
    def _hit(sc: StoredChunk, combined: float, normalized: dict, raw: dict) -> Hit:
        cid = sc.chunk.chunk_id
        return Hit(
            stored=sc,
            combined=min(1.0, max(0.0, combined)),
            normalized={name: normalized.get(name, {}).get(cid, 0.0) for name in STRATEGIES},
            raw={
                "bm25": raw.get("keyword", {}).get(cid, 0.0),
                "cosine": raw.get("semantic", {}).get(cid, 0.0),
                "graph": raw.get("graph", {}).get(cid, 0.0),
            },
        )

    @staticmethod
    def _filter(hits: list[Hit], query: SearchQuery) -> list[Hit]:
        f = query.filters
        out = []
        file_ids = set(f.file_ids) if f.file_ids else None
        rng = f.date_range
        for h in hits:
            c = h.chunk
            if file_ids is not None and c.doc_id not in file_ids and c.source not in file_ids:
                continue
            if rng is not None and (rng.start is not None or rng.end is not None):
                ts = _parse_ts(c.updated_at)
                if ts is None:
                    continue
                if rng.start is not None and ts < _aware(rng.start):
                    continue
                if rng.end is not None and ts > _aware(rng.end):
                    continue
            if h.combined < f.min_relevance:
                continue
            out.append(h)
        return out

    def _rerank(
        self, text: str, hits: list[Hit], cfg: RerankConfig, outcome: SearchOutcome
    ) -> None:
        if not cfg.enabled or not hits:
            return
        model = self.corpus.settings.rerank_model or cfg.model
        reranker, reason = load_reranker(model, cfg.batch_size)
        if reranker is None:
            outcome.rerank_fallback = reason
            log.info("rerank fallback (%s): keeping the fused order", reason)
            return
        head = hits[: cfg.top_k]
        for h, s in zip(head, reranker.score(text, [h.chunk.text for h in head]), strict=True):
            h.rerank = s
        head.sort(key=lambda h: -(h.rerank or 0.0))
        hits[: cfg.top_k] = head
        outcome.rerank_used = True

    def _item(
        self, h: Hit, terms: list[str], with_highlights: bool, doc_text: str | None
    ) -> SearchResultItem:
        c = h.chunk
        before = doc_text[max(0, c.start - CONTEXT_CHARS) : c.start] if doc_text else None
        after = doc_text[c.end : c.end + CONTEXT_CHARS] if doc_text else None
        highlights = []
        if with_highlights:
            offsets = find_offsets(c.body, terms)
            if offsets:
                first = offsets[0][0]
                highlights.append(
                    Highlight(
                        field="text",
                        fragment=c.body[max(0, first - 40) : first + 80],
                        offsets=[HighlightOffset(start=s, end=e) for s, e in offsets],
                    )
                )
        return SearchResultItem(
            id=c.chunk_id,
            type=SearchResultType.CHUNK,
            score=min(1.0, max(0.0, h.score)),
            relevance=RelevanceScore(
                combined=h.combined,
                keyword=h.normalized["keyword"],
                semantic=h.normalized["semantic"],
                graph=h.normalized["graph"],
                rerank=h.rerank,
                crag=None,
            ),
            content=SearchResultContent(
                text=c.body,
                summary=c.heading or c.title,
                context_before=before,
                context_after=after,
            ),
            highlights=highlights,
            sources=SearchResultSources(
                chunk_id=c.chunk_id,
                file_id=c.doc_id,
                entity_ids=[e.key for e in self.corpus.graph.entities_for_chunk(c.chunk_id)],
                community_id=None,
                relation_ids=[],
            ),
        )

    def _doc_text(self, doc_id: str) -> str | None:
        doc = self.corpus.store.document(doc_id)
        return doc.text if doc else None


def _metric(
    name: str,
    wanted: set[str],
    ranked: _Rankings,
    normalized: dict[str, dict[str, float]],
) -> StrategyMetric:
    top = max(normalized.get(name, {}).values(), default=0.0)
    return StrategyMetric(
        enabled=name in wanted,
        result_count=len(ranked.rankings.get(name, [])),
        processing_time=ranked.times.get(name, 0.0),
        top_score=min(1.0, max(0.0, top)),
    )
