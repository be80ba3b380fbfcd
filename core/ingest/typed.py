"""Headings typed by hand: documents written without heading markup.

Japanese business documents, and pages saved from them, are often written without Word's
heading styles or HTML's ``h1``-``h4``: every heading is a paragraph of its own, set bold (or
larger) and numbered by hand (``1. 目的``, ``2.1 端末の隔離``, 第3章). The Word and HTML readers
then read headings from their look (``core.ingest.docx``, ``core.ingest.html``); this module
holds what both ask of such a paragraph's text and how deep a numbered one sits.
"""

from __future__ import annotations

from core.text.chunking import pdf_heading_level

__all__ = ["MAX_HEADING_CHARS", "MAX_LEVEL", "heading_text", "typed_level"]

MAX_LEVEL = 4
MAX_HEADING_CHARS = 60
_NOT_END = tuple("。．.!！:：;；,，、")


def heading_text(text: str) -> bool:
    """Whether a paragraph's text could be a heading: short, not a sentence or a run-in label
    (no sentence end, no 「。」 inside, no closing colon or comma)."""
    text = text.strip()
    return 0 < len(text) <= MAX_HEADING_CHARS and not text.endswith(_NOT_END) and "。" not in text


def typed_level(text: str, rank: int) -> int:
    """The level of a heading typed by hand: ``rank`` (from its look, 1 the highest), or its
    number's depth when that is deeper (``2.1`` set as large as ``2.`` is still under it; steps
    numbered again inside a subsection stay under it)."""
    return min(max(pdf_heading_level(text), rank), MAX_LEVEL)
