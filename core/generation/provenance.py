"""Sentence-level provenance: every sentence of a finished answer tied to the span that supports it.

After an answer is complete (LLM or extractive), ``check_answer`` splits it into sentences
(``core.generation.sentences``), normalises every citation-marker form and removes the invented
ones, and aligns each checked sentence to a span of the cited passages (``Citation.text``, the
text a reviewer is shown; offsets index it) with a support score in 0..1
(``core.generation.support``). A sentence with a marker ``[n]`` is aligned to passage n, one
without a marker to every cited passage.

The span is the window with the highest score. A sentence is unsupported when its score is
below ``THRESHOLD``, when a number or identifier of it is missing from its best span, or when it
cited a source that was not given. Unsupported sentences get ``UNSUPPORTED_MARK`` or are removed
(``Settings.unsupported_sentences``); both are counted in a Japanese warning.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from core.generation.citations import normalize_markers
from core.generation.sentences import LIST_PREFIX, AnswerSentence, split_answer
from core.generation.support import THRESHOLD, Probe, align
from core.schemas.answer import Answer, Citation
from core.schemas.provenance import SentenceSupport, SupportReason
from core.settings import Settings

log = logging.getLogger(__name__)

UNSUPPORTED_MARK = "［根拠なし］"


# --- the check ---------------------------------------------------------------------------------


def _passages_for(s: AnswerSentence, answer: Answer) -> list[Citation]:
    by_n = {c.n: c for c in answer.citations}
    marked = [by_n[n] for n in s.markers if n in by_n]
    if marked:
        return marked
    return [c for c in answer.citations if c.cited] or list(answer.citations)


def _embedder(settings: Settings):
    from core.retrieval.embeddings import get_embedder

    return get_embedder(settings)


def check_answer(answer: Answer, settings: Settings, embedder=None) -> Answer:
    """Check every sentence of a finished answer; mark or remove the unsupported ones (in place).

    Template answers (refusals, clarifications, errors) are not checked. ``embedder``: the one
    to use for cosines (default: the configured embedder, loaded only when needed).
    """
    if answer.answer_mode == "template" or answer.error or not answer.citations:
        return answer
    valid = {c.n for c in answer.citations}
    text = answer.answer
    sentences = split_answer(text)
    checked = [s for s in sentences if s.checked]
    probes = [Probe.of(s.body) for s in checked]
    passages = [_passages_for(s, answer) for s in checked]

    alignments = align(
        probes, passages, lambda: embedder if embedder is not None else _embedder(settings)
    )

    results: list[SentenceSupport] = []
    invented_all: list[str] = []
    for index, (s, a) in enumerate(zip(checked, alignments, strict=True)):
        invented = [str(n) for n in s.markers if n not in valid]
        invented_all += invented
        score = round(a.score, 4)
        reason: SupportReason = "supported" if score >= THRESHOLD else "no_support"
        if a.features is not None and a.features.num_miss:
            reason = "number_mismatch"  # a changed number is unsupported, whatever the rest
        if invented:
            reason = "invented_marker"
        results.append(
            SentenceSupport(
                index=index,
                text=s.body,
                markers=[n for n in s.markers if n in valid],
                citation=a.citation.n if a.citation else None,
                chunk_id=a.citation.chunk_id if a.citation else None,
                span_start=a.window.start if a.window else 0,
                span_end=a.window.end if a.window else 0,
                score=score,
                supported=reason == "supported",
                reason=reason,
                removed=reason != "supported" and settings.unsupported_sentences == "remove",
            )
        )
    for s in sentences:
        if not s.checked:
            invented_all += [str(n) for n in s.markers if n not in valid]
    answer.answer = _rewrite(text, sentences, checked, results, valid)
    answer.sentences = results
    _warn(answer, list(dict.fromkeys(invented_all)), settings)
    return answer


def _rewrite(
    text: str,
    sentences: list[AnswerSentence],
    checked: list[AnswerSentence],
    results: list[SentenceSupport],
    valid: set[int],
) -> str:
    """The answer with markers normalised, and each unsupported sentence marked or removed."""
    verdict = {id(s): r for s, r in zip(checked, results, strict=True)}
    labels = [str(n) for n in valid]
    out = text
    for s in sorted(sentences, key=lambda s: -s.start):
        piece, _ = normalize_markers(out[s.start : s.end], labels)
        piece = " ".join(piece.split(" ")).rstrip()
        r = verdict.get(id(s))
        if r is not None and not r.supported:
            piece = "" if r.removed else f"{piece} {UNSUPPORTED_MARK}"
        out = out[: s.start] + piece + out[s.end :]
    lines = []
    for line in out.split("\n"):
        prefix = LIST_PREFIX.match(line)
        if prefix and not line[prefix.end() :].strip():
            continue  # a list item whose only sentence was removed
        lines.append(re.sub(r"(?<=\S)[ \t]{2,}", " ", line).rstrip())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _warn(answer: Answer, invented: list[str], settings: Settings) -> None:
    if invented:
        log.warning("Removed invented references: %s", ", ".join(f"[{n}]" for n in invented))
        answer.removed_refs = list(dict.fromkeys([*answer.removed_refs, *invented]))
        answer.warnings.append(
            "存在しない出典番号 "
            + ", ".join(f"[{n}]" for n in invented)
            + " を回答から取り除き、その文を根拠なしとしました。"
        )
    count = sum(1 for s in answer.sentences if not s.supported)
    if not count:
        return
    if settings.unsupported_sentences == "remove":
        answer.warnings.append(f"引用元に根拠が見つからない文 {count} 件を回答から取り除きました。")
    else:
        answer.warnings.append(
            f"引用元に根拠が見つからない文が {count} 件あります（{UNSUPPORTED_MARK} の付いた文）。"
            "引用元で確認してください。"
        )


def supported_share(sentences: Sequence[SentenceSupport]) -> float | None:
    """The share of checked sentences that are supported (None when nothing was checked)."""
    return sum(s.supported for s in sentences) / len(sentences) if sentences else None
