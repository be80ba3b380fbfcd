"""The answer contract of every RAG pipeline: what ``ask()`` returns, pages render and the log keeps.

Both pipelines (``core.runbook_chat.ask`` and ``core.wiki.qa.ask``) have the shape
``ask(question, history, config, settings) -> Answer``; ``core.pipelines`` names them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from core.schemas.provenance import SentenceSupport

# An extractive answer's lead line, naming the section it quotes (however long the heading
# path): 「IRP-Ransomware: … > Part 3 — Contain > 3.2 Containment Actions」より [1]:
SOURCE_LEAD = re.compile(r"「([^「」\n]+)」より\s*(?:\[\d+\]\s*)?[:：]")


def source_lead(heading: str, label: str) -> str:
    """The lead line of a passage quoted from ``heading`` (see ``SOURCE_LEAD``)."""
    return f"「{heading}」より [{label}]:"


def quoted_heading(line: str) -> str | None:
    """The heading path a lead line (``SOURCE_LEAD``) names, or None for any other line."""
    match = SOURCE_LEAD.fullmatch(line.strip())
    return match.group(1) if match else None


AnswerMode = Literal["llm", "extractive", "template"]


@dataclass
class Exchange:
    """One earlier turn of a conversation, as a pipeline's ``history`` takes it."""

    question: str
    answer: str
    search_query: str = ""


class Citation(BaseModel):
    """One passage behind an answer, pinned to its chunk id and the document's content hash."""

    n: int  # the [n] marker in the answer
    chunk_id: str
    file: str
    heading: str
    score: float
    bm25_score: float  # raw BM25
    vector_score: float  # raw cosine
    keyword_norm: float = 0.0  # as fused (min-max within the query)
    semantic_norm: float = 0.0
    excerpt: str  # at most 200 characters, … when cut
    text: str  # the full passage as given to the answerer
    doc_hash: str
    updated_at: str = ""
    cited: bool = True  # referenced by a marker in the answer
    ref: str | None = None  # a stable label of the passage, e.g. jawiki:<title>#chunk=<n>
    url: str | None = None  # where the source can be read (Wikipedia articles)


DangerSource = Literal["question", "answer"]
DangerRule = Literal["verb_object", "command", "keyword", "concealment", "loss"]


class DangerMatch(BaseModel):
    """One destructive operation behind the danger banner (see ``core.danger``)."""

    phrase: str  # the text that fired, as written
    source: DangerSource  # asked for in the question, or instructed by the answer
    # destructive verb + object, command pattern, the design's keyword floor, or a request to
    # hide what one did (「誰にもバレないように」, "cover my tracks"), or a loss asked for or
    # accepted (「全部消えるようにしたい」, "so everything is gone")
    rule: DangerRule
    verb: str = ""
    object: str = ""  # empty when the verb needs none (削除してください, wipe) or for commands


LLMOutcome = Literal["ok", "timeout", "error", "fallback"]


class LLMCall(BaseModel):
    """One call through the LLM port (``core.generation.llm``), as the audit log keeps it.

    ``outcome``: ``ok``; ``timeout`` (the time budget passed) or ``error`` (the server failed,
    an empty or truncated reply, invalid JSON after the repair) as the port saw it; ``fallback``
    once the caller answered without the model (``failure`` then keeps timeout / error).
    """

    stage: str  # the page or stage that made the call: runbook_chat, interview.stage02_extract …
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    first_token_ms: float | None = None  # streams: when the first text arrived
    attempts: int = 0  # HTTP requests made (1 + retries)
    retries: int = 0
    outcome: LLMOutcome = "ok"
    failure: str = ""  # "timeout" | "error" | "" (kept when the outcome becomes fallback)
    reason: str = ""  # the failure in English (status, exception), for operators
    streamed: bool = False
    cut: bool = False  # the reply was longer than the limit and was cut

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Flags(BaseModel):
    insufficient_evidence: bool = False
    dangerous_operation: bool = False
    ambiguous_query: bool = False


class Answer(BaseModel):
    question: str
    answer: str
    answer_mode: AnswerMode
    citations: list[Citation] = Field(default_factory=list)
    flags: Flags = Field(default_factory=Flags)
    banner: str | None = None  # 「⚠️ 承認・確認が必要」 when a dangerous operation is involved
    rewritten_query: str | None = None  # the search query when a follow-up was resolved
    query_terms: list[str] = Field(default_factory=list)
    evidence: dict[str, float] = Field(default_factory=dict)
    dangerous_terms: list[str] = Field(default_factory=list)  # the phrases of ``danger``
    danger: list[DangerMatch] = Field(default_factory=list)
    token_usage: dict[str, int] = Field(
        default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    )
    cost_usd: float = 0.0
    model: str | None = None
    processing_time_sec: float = 0.0
    slow: bool = False
    warnings: list[str] = Field(default_factory=list)  # Japanese, shown under the answer
    removed_refs: list[str] = Field(default_factory=list)  # markers the model invented, removed
    # How the passages were found (strategy, k, weights, rerank …), as the audit log keeps it.
    retrieval: dict[str, Any] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    page: str = ""  # the pipeline that answered: "runbook_chat" | "wiki_qa"
    llm_calls: list[LLMCall] = Field(default_factory=list)  # every call through the LLM port
    # Set when the question could not be handled (bad input, no index …): the Japanese message,
    # also the answer text. Pipelines never raise for these; callers may exit non-zero on it.
    error: str | None = None
    audit_logged: bool = False
    # Sentence-level provenance (core.generation.provenance): every checked sentence, its span.
    sentences: list[SentenceSupport] = Field(default_factory=list)

    @property
    def unsupported_count(self) -> int:
        """Sentences no span of the cited passages supports (marked or removed)."""
        return sum(1 for s in self.sentences if not s.supported)

    @property
    def found(self) -> bool:
        """Whether the answer comes from the sources (not a refusal or a template)."""
        return self.answer_mode != "template"

    def display_text(self) -> str:
        """The answer as plain text: the banner first when a dangerous operation is involved."""
        return f"{self.banner}\n\n{self.answer}" if self.banner else self.answer
