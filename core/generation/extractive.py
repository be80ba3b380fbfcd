"""The extractive answerer: the offline answer mode (no LLM), a real algorithm.

It splits each retrieved passage into units (numbered steps and sentences), scores every unit
against the question by query-term coverage and embedding similarity (plus the passage's own
retrieval score), and composes an answer from the best units with citation markers:

- when the best unit is a numbered step, the whole numbered list it belongs to is given, in
  its original order (operators need every step, not the single best sentence); the same for
  a bullet list introduced by a lead sentence (「次のいずれかに当てはまる場合…」 and its items)
  or one of at most ``SHORT_LIST`` items;
- otherwise the best sentences are given in document order;
- up to two strong units from other passages follow as 補足.

Every unit carries the marker of the passage it came from (``[1]`` or ``[0]``, as the caller
labels them), so every claim in the answer is traceable to its source.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from core.text.english import is_plain_word, same_stem_in

STEP_RE = re.compile(
    r"^\s*(?:(\d{1,2})[.．)）]\s*|\((\d{1,2})\)\s*|([①-⑳])\s*|手順\s*(\d{1,2})\s*[:：]\s*)"
)
SENTENCE_RE = re.compile(r"[^。！？!?\n]+[。！？!?]*")
BULLET_RE = re.compile(r"^\s*[-*・•]\s+")
MAX_STEPS = 12
SHORT_LIST = 6  # a bullet list this short is given whole, like a numbered list
LEAD_WORDS = ("次の", "以下の")
MAX_UNIT_CHARS = 300


@dataclass(frozen=True, slots=True)
class Evidence:
    label: str  # the marker inside the brackets: "1" for [1]
    text: str  # passage body
    heading: str  # heading path or title, for the lead line
    score: float = 1.0  # retrieval score in [0, 1]


@dataclass(slots=True)
class Unit:
    evidence: int  # index into the evidence list
    position: int  # order inside the passage
    text: str
    kind: str  # "step" | "bullet" | "lead" | "sentence"
    list_id: int  # steps of one numbered list share an id; sentences get -1
    score: float = 0.0


@dataclass(slots=True)
class ExtractiveAnswer:
    text: str
    used_labels: list[str] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)


def _introduces_list(sentence: str) -> bool:
    return sentence.rstrip().endswith((":", "：")) or any(w in sentence for w in LEAD_WORDS)


def split_units(text: str, evidence: int = 0) -> list[Unit]:
    """Numbered steps (one per line), bullet items (one per line) and sentences, in order.

    Consecutive steps share a ``list_id``, and so do consecutive bullet items; a sentence just
    before a bullet list that introduces it (「次のいずれか…」, 「以下の…」, a trailing colon)
    becomes the list's ``lead`` and shares its id.
    """
    units: list[Unit] = []
    list_id = -1
    next_list = 0
    in_list = False  # inside a numbered list
    in_bullets = False  # inside a bullet list
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if STEP_RE.match(stripped):
            in_bullets = False
            if not in_list:
                list_id, next_list, in_list = next_list, next_list + 1, True
            units.append(Unit(evidence, len(units), stripped[:MAX_UNIT_CHARS], "step", list_id))
            continue
        if in_list and (line.startswith(("   ", "\t")) or BULLET_RE.match(line)):
            # an indented continuation or sub-bullet of the current step
            units[-1].text = (units[-1].text + " " + stripped)[:MAX_UNIT_CHARS]
            continue
        in_list = False
        if BULLET_RE.match(stripped):
            item = BULLET_RE.sub("", stripped).strip()
            if len(item) < 4:
                continue
            if not in_bullets:
                list_id, next_list, in_bullets = next_list, next_list + 1, True
                lead = units[-1] if units else None
                if (
                    lead
                    and lead.kind == "sentence"
                    and lead.list_id < 0
                    and _introduces_list(lead.text)
                ):
                    lead.kind, lead.list_id = "lead", list_id
            units.append(Unit(evidence, len(units), item[:MAX_UNIT_CHARS], "bullet", list_id))
            continue
        in_bullets = False
        for sentence in SENTENCE_RE.findall(stripped):
            sentence = sentence.strip()
            if len(sentence) >= 4:
                units.append(Unit(evidence, len(units), sentence[:MAX_UNIT_CHARS], "sentence", -1))
    return units


def term_coverage(text: str, terms: Sequence[str]) -> float:
    """Share of the query terms (weighted by length, capped at 6) that occur in ``text``.

    A plain English word occurs when a word of ``text`` has its stem (``isolate`` occurs in
    "isolating the host"); any other term when it is a substring (case-insensitive).
    """
    lowered = text.lower()
    words = same_stem_in(text, terms)
    total = sum(min(len(t), 6) for t in terms)
    hit = sum(
        min(len(t), 6) for t in terms if (t in words if is_plain_word(t) else t.lower() in lowered)
    )
    return hit / total if total else 0.0


def _score_units(
    units: list[Unit],
    evidence: Sequence[Evidence],
    terms: Sequence[str],
    query_vector: np.ndarray | None,
    embedder,
) -> None:
    for u in units:
        u.score = 0.55 * term_coverage(u.text, terms) + 0.2 * evidence[u.evidence].score
    if embedder is None or query_vector is None or not units:
        return
    # Embedding similarity for the most promising units only (the embedder is the cost).
    head = sorted(units, key=lambda u: -u.score)[:8]
    vectors = embedder.embed_passages([u.text for u in head])
    sims = vectors @ np.asarray(query_vector, dtype=np.float32)
    for u, sim in zip(head, sims, strict=True):
        # E5 cosines live in ~[0.7, 0.9]; stretch that band to [0, 1]
        u.score += 0.25 * float(np.clip((sim - 0.75) / 0.15, 0.0, 1.0))


def extractive_answer(
    question: str,
    evidence: Sequence[Evidence],
    terms: Sequence[str],
    embedder=None,
    query_vector: np.ndarray | None = None,
    max_sentences: int = 4,
) -> ExtractiveAnswer:
    """Compose an answer from the evidence; ``terms`` are the query's content terms."""
    units = [u for i, ev in enumerate(evidence) for u in split_units(ev.text, i)]
    if not units:
        return ExtractiveAnswer(text="")
    if embedder is not None and query_vector is None:
        query_vector = embedder.embed_query_vector(question)
    _score_units(units, evidence, terms, query_vector, embedder)
    best = max(units, key=lambda u: (u.score, -u.evidence, -u.position))

    chosen: list[Unit]
    members = [u for u in units if u.evidence == best.evidence and u.list_id == best.list_id]
    has_lead = any(u.kind == "lead" for u in members)
    if best.kind == "step" or (
        best.kind in ("bullet", "lead") and (has_lead or len(members) <= SHORT_LIST)
    ):
        chosen = members[: MAX_STEPS + 1]
    else:
        same = [u for u in units if u.evidence == best.evidence and u.score >= 0.6 * best.score]
        chosen = sorted(
            sorted(same, key=lambda u: -u.score)[:max_sentences], key=lambda u: u.position
        )

    taken = {(u.evidence, u.position) for u in chosen}
    extras = [
        u
        for u in sorted(units, key=lambda u: -u.score)
        if u.evidence != best.evidence
        and (u.evidence, u.position) not in taken
        and u.score >= 0.7 * best.score
        and u.score > 0.2
    ][:2]

    ev = evidence[best.evidence]
    lines = [f"「{ev.heading}」より [{ev.label}]:" if ev.heading else f"[{ev.label}]:"]
    for u in chosen:
        lines.append(f"{u.text} [{ev.label}]" if u.kind == "step" else f"- {u.text} [{ev.label}]")
    if extras:
        lines.append("")
        lines.append("補足:")
        for u in extras:
            lines.append(f"- {u.text} [{evidence[u.evidence].label}]")
    used = [ev.label] + [
        evidence[u.evidence].label for u in extras if evidence[u.evidence].label != ev.label
    ]
    return ExtractiveAnswer(
        text="\n".join(lines),
        used_labels=list(dict.fromkeys(used)),
        units=chosen + extras,
    )
