"""Stage02 offline: rule-based extraction of slot values from one answer.

The answer first gets a kind (``answers.classify_answer``). Content then fills:

- the question's target slot(s): the whole answer, or for a bundled question the sentences
  whose cues name each slot (confidence ``CONF_TARGETED`` / ``CONF_BUNDLED``);
- any other slot whose cues appear in a sentence (``CONF_INCIDENTAL``), so that an answer that
  mentions the detection time while describing the timeline is not lost.

The LLM path (``llm.LLMExtractor``) returns the same ``Extraction``.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, Field

from core.interview.answers import AnswerKind, classify_answer, detect_language, is_correction
from core.interview.domains import SlotSpec
from core.interview.normalizers import normalize, parse_refs
from core.interview.parsing import (
    ParsedValue,
    clauses,
    completeness,
    none_value,
    parse_fields,
    parse_value,
    sentences,
)
from core.interview.slots import CONF_BUNDLED, CONF_INCIDENTAL, CONF_TARGETED, SourceKind

MAX_EXTRACT_CHARS = 4000
CONF_TOPIC = 0.6

Mode = Literal["targeted", "bundled", "incidental", "topic", "retrieval", "inferred", "llm"]


class SlotCandidate(BaseModel):
    slot: str
    text: str
    fields: dict[str, str] = Field(default_factory=dict)
    norm: dict[str, Any] = Field(default_factory=dict)
    items: list[dict[str, str]] = Field(default_factory=list)
    confidence: float = Field(ge=0.0, le=1.0)
    normalized_match: float = Field(ge=0.0, le=1.0)
    source_kind: SourceKind = "user"
    mode: Mode = "targeted"
    provenance: str = ""
    is_none: bool = False


class Extraction(BaseModel):
    kind: str
    language: str = "Japanese"
    candidates: list[SlotCandidate] = Field(default_factory=list)
    unanswered: list[str] = Field(default_factory=list)
    correction: bool = False
    method: Literal["rules", "llm"] = "rules"
    truncated: bool = False
    kg_entities: list[dict[str, Any]] = Field(default_factory=list)  # LLM Stage02 KGPayload
    kg_relations: list[dict[str, Any]] = Field(default_factory=list)


def candidate(
    spec: SlotSpec,
    value: ParsedValue,
    confidence: float,
    mode: Mode,
    provenance: str = "",
    source_kind: SourceKind = "user",
) -> SlotCandidate:
    return SlotCandidate(
        slot=spec.name,
        text=value.text[:1000],
        fields=value.fields,
        norm=value.norm,
        items=value.items,
        confidence=confidence,
        normalized_match=value.normalized_match,
        source_kind=source_kind,
        mode=mode,
        provenance=provenance,
        is_none=value.is_none,
    )


def _cue_words(spec: SlotSpec) -> list[str]:
    words = list(spec.cues)
    for fspec in spec.fields:
        words.extend(fspec.cues)
    for group in spec.terms:
        words.extend(re.escape(t) for t in group)
    return words


def _score(segment: str, spec: SlotSpec) -> int:
    return sum(1 for cue in _cue_words(spec) if re.search(cue, segment, re.IGNORECASE))


def split_for_bundle(text: str, specs: list[SlotSpec]) -> dict[str, str]:
    """Assign the sentences (or clauses) of an answer to the slots of a bundled question."""
    segments = sentences(text)
    if len(segments) < len(specs):
        segments = clauses(text)
    assigned: dict[str, list[str]] = {s.name: [] for s in specs}
    leftovers: list[str] = []
    for segment in segments:
        scores = [(_score(segment, spec), -i, spec.name) for i, spec in enumerate(specs)]
        best = max(scores)
        if best[0] > 0:
            assigned[best[2]].append(segment)
        else:
            leftovers.append(segment)
    for segment in leftovers:
        empty = next((name for name, segs in assigned.items() if not segs), None)
        assigned[empty or specs[0].name].append(segment)
    return {name: "。".join(segs) for name, segs in assigned.items() if segs}


def _incidental(
    text: str, specs: dict[str, SlotSpec], skip: set[str], filled: set[str], today: date | None
) -> list[SlotCandidate]:
    out: list[SlotCandidate] = []
    sents = sentences(text)
    for name, spec in specs.items():
        if name in skip or not spec.cues or spec.type == "list":
            continue
        if spec.type == "sequence" and not any(f.kind == "time" for f in spec.fields):
            continue  # free-form items read in passing are too noisy
        hits = [s for s in sents if any(re.search(c, s, re.IGNORECASE) for c in spec.cues)]
        if not hits:
            continue
        if spec.type == "links" and not parse_refs("。".join(hits)):
            continue  # a cue word in passing (「チケットに記録する」) is not a reference
        value = parse_value(spec, "。".join(hits), today)
        if spec.type == "text" and value.normalized_match > 0:
            # a text slot mentioned in passing keeps only the clauses that carry its cues
            parts = [c for c in clauses(value.text) if any(re.search(q, c) for q in spec.cues)]
            value = parse_value(spec, "、".join(parts) or value.text, today)
        if value.normalized_match <= 0:
            continue
        if name in filled:
            # a filled slot only hears comparable values (to catch contradictions)
            if not value.norm:
                continue
            value.fields = {k: v for k, v in value.fields.items() if k in value.norm}
            value.items = []
        out.append(candidate(spec, value, CONF_INCIDENTAL, "incidental"))
    return out


def extract_answer(
    text: str,
    specs: dict[str, SlotSpec],
    targets: list[str],
    *,
    filled: set[str] | None = None,
    today: date | None = None,
) -> Extraction:
    """Slot candidates carried by ``text`` (the answer to a question about ``targets``)."""
    kind = classify_answer(text)
    normalized = normalize(text or "").strip()
    truncated = len(normalized) > MAX_EXTRACT_CHARS
    s = normalized[:MAX_EXTRACT_CHARS]
    targets = [t for t in targets if t in specs]
    result = Extraction(
        kind=kind.value,
        language=detect_language(s) if s else "Japanese",
        correction=is_correction(s),
        truncated=truncated,
    )
    if kind in (AnswerKind.EMPTY, AnswerKind.UNKNOWN, AnswerKind.ABORT):
        result.unanswered = list(targets)
        return result
    if kind == AnswerKind.NONE:
        for name in targets:
            spec = specs[name]
            if spec.allow_none:
                result.candidates.append(
                    candidate(spec, none_value(spec), CONF_TARGETED, "targeted")
                )
            else:
                result.unanswered.append(name)
        return result
    incidental = _incidental(s, specs, set(targets), filled or set(), today)
    if result.correction and incidental:
        # a correction about another slot (「実は2人分でした」) is not part of this answer
        others = [specs[c.slot] for c in incidental]
        kept = [
            x for x in sentences(s) if not (is_correction(x) and any(_score(x, o) for o in others))
        ]
        s = "。".join(kept) or s
    if len(targets) == 1:
        spec = specs[targets[0]]
        result.candidates.append(
            candidate(spec, parse_value(spec, s, today), CONF_TARGETED, "targeted")
        )
    elif targets:
        parts = split_for_bundle(s, [specs[t] for t in targets])
        for name in targets:
            if name in parts:
                value = parse_value(specs[name], parts[name], today)
                result.candidates.append(candidate(specs[name], value, CONF_BUNDLED, "bundled"))
            else:
                result.unanswered.append(name)
    result.candidates.extend(incidental)
    return result


_TOPIC_NOISE = re.compile(
    r"(?:のレシピ|の作り方|を作りたい|を作ります|について(?:まとめたい|振り返りたい|書きたい)?|"
    r"を記録したい|を残したい|の手順書?|の日報|の週報|です|。)+$"
)


def extract_topic(
    topic: str, specs: dict[str, SlotSpec], today: date | None = None
) -> list[SlotCandidate]:
    """Fields marked ``from_topic`` read from the session topic (a recipe's dish, a report's date)."""
    text = normalize(topic).strip()
    out: list[SlotCandidate] = []
    cleaned = _TOPIC_NOISE.sub("", text).strip(" 、,") or text
    for spec in specs.values():
        wanted = [f for f in spec.fields if f.from_topic]
        if not wanted or not text:
            continue
        fields, norm = parse_fields(wanted, cleaned, today)
        if fields:
            value = ParsedValue(text=text, fields=fields, norm=norm)
            value.normalized_match = round(completeness(spec, fields), 4)
            out.append(candidate(spec, value, CONF_TOPIC, "topic", provenance="topic"))
    return out


__all__ = [
    "CONF_INCIDENTAL",
    "Extraction",
    "SlotCandidate",
    "candidate",
    "extract_answer",
    "extract_topic",
    "split_for_bundle",
]
