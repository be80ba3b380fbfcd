"""Sentence-level provenance: how each sentence of an answer is tied to the span that supports it.

``core.generation.provenance`` fills ``Answer.sentences`` with one ``SentenceSupport`` per
checked sentence; the audit log keeps ``AuditSentence`` (offsets and scores, never the text).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

UnsupportedPolicy = Literal["mark", "remove"]
SupportReason = Literal[
    "supported",  # a span of the cited passage supports it
    "no_support",  # no span scores high enough
    "number_mismatch",  # a number or identifier of the sentence is not in the best span
    "invented_marker",  # it cited a source that was not given (the marker was removed)
]


class SentenceSupport(BaseModel):
    """One sentence of an answer and the span of a cited passage that best supports it."""

    index: int  # order among the checked sentences of the answer
    text: str  # the sentence as shown, without its markers (already part of the answer text)
    markers: list[int] = []  # the sources it cites (after normalisation)
    citation: int | None = None  # the ``Citation.n`` of the best span's passage
    chunk_id: str | None = None
    span_start: int = 0  # character offsets into ``Citation.text``
    span_end: int = 0
    score: float = 0.0  # support in 0..1
    supported: bool = False
    reason: SupportReason = "no_support"
    removed: bool = False  # dropped from the answer (``WB_UNSUPPORTED_SENTENCES=remove``)


class AuditSentence(BaseModel):
    """What the audit log keeps of a sentence check: ids, offsets and scores only."""

    index: int = 0
    chunk_id: str | None = None
    citation: int | None = None
    span: tuple[int, int] = (0, 0)
    score: float = 0.0
    supported: bool = False
    reason: str = ""
    removed: bool = False

    @classmethod
    def of(cls, s: SentenceSupport) -> AuditSentence:
        return cls(
            index=s.index,
            chunk_id=s.chunk_id,
            citation=s.citation,
            span=(s.span_start, s.span_end),
            score=s.score,
            supported=s.supported,
            reason=s.reason,
            removed=s.removed,
        )
