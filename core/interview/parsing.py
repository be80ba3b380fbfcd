"""Parse one piece of answer text into a slot's value (fields, items) and its completeness.

``parse_value(spec, text)`` applies the field extractors of the slot's fields (normalizers for
numbers, times, URLs, owners …), splits lists and sequences into items, and returns the
``normalized_match`` of design 10.2: the share of required fields (and ``require_any``
groups) found, times the share of the minimum number of items for lists and sequences.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from core.interview.domains import FieldSpec, SlotSpec
from core.interview.normalizers import (
    find_command,
    find_criterion,
    find_owner,
    format_duration,
    normalize,
    parse_clock_times,
    parse_dates,
    parse_due,
    parse_durations,
    parse_heat,
    parse_quantities,
    parse_refs,
)

COMPARABLE_KINDS = {
    "magnitude",
    "money",
    "duration",
    "time",
    "date",
    "due",
    "owner",
    "bool",
    "temperature",
}
_OPEN, _CLOSE = "([「『【<", ")]」』】>"
_CLAUSE_SEPS = re.compile(r"[、,。;；\n]|→|->|⇒")
_SENTENCE_SEPS = re.compile(r"[。!?！？\n]+")
_NUMBERED = re.compile(r"(?:(?<=^)|(?<=[\s。]))(?:\d{1,2}[.)](?!\d)|[①-⑳]|\(\d{1,2}\))\s*")
_ARROWS = re.compile(r"→|->|⇒")
_STEP_WORDS = re.compile(r"その後|次に|続いて|最後に|それから")
_BULLET = re.compile(r"^\s*(?:[-*・●○]|\d{1,2}[.)](?!\d)|[①-⑳]|\(\d{1,2}\))\s*")
_CONDITION = re.compile(
    r"(?P<cond>[^。\n]{1,60}?(?:場合|とき|時|なら(?:ば)?|であれば|際|if\s[^,]+))"
    r"(?:は|には|に|、|,|\s)"
)
_YES = re.compile(r"可能|できる|できます|戻せる|戻せます|あり|はい|yes|可(?!能)", re.IGNORECASE)
_NO = re.compile(r"不可|できない|できません|戻せない|戻せません|なし|いいえ|no\b", re.IGNORECASE)
_HOLE = "\x00"  # where a field's value was taken out of the remainder
_DANGLING = re.compile(r"[^、。,\s]{1,8}(?:は|が|:|：)\s*[、,。]?")
_CONTENT = re.compile(r"[\s、。,.!?！？・()\[\]「」→~-]")


@dataclass(slots=True)
class FieldHit:
    display: str
    norm: Any  # comparable value (float, str) or None
    spans: list[tuple[int, int]] = field(default_factory=list)


@dataclass(slots=True)
class ParsedValue:
    text: str
    fields: dict[str, str] = field(default_factory=dict)  # display values
    norm: dict[str, Any] = field(default_factory=dict)  # comparable values
    items: list[dict[str, str]] = field(default_factory=list)
    normalized_match: float = 0.0
    is_none: bool = False


def content_length(text: str) -> int:
    return len(_CONTENT.sub("", text))


def _depths(text: str) -> list[int]:
    depth, out = 0, []
    for char in text:
        if char in _OPEN:
            depth += 1
        out.append(depth)
        if char in _CLOSE and depth:
            depth -= 1
    return out


def split_top_level(text: str, pattern: re.Pattern[str]) -> list[str]:
    """Split on ``pattern`` outside brackets: ``A(B、C)、D`` -> ``["A(B、C)", "D"]``."""
    depth = _depths(text)
    parts, last = [], 0
    for m in pattern.finditer(text):
        if m.start() < len(depth) and depth[m.start()] == 0 and m.end() > m.start():
            parts.append(text[last : m.start()])
            last = m.end()
    parts.append(text[last:])
    return [p.strip() for p in parts if p and p.strip()]


def split_at(text: str, starts: list[int]) -> list[str]:
    bounds = sorted(set([0, *starts, len(text)]))
    return [text[a:b].strip() for a, b in itertools.pairwise(bounds) if text[a:b].strip()]


def clauses(text: str) -> list[str]:
    return split_top_level(text, _CLAUSE_SEPS)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_SEPS.split(text) if s.strip()]


def _clean_item(text: str) -> str:
    return _BULLET.sub("", text).strip(" 、,。;；・-")


def split_items(text: str, spec: SlotSpec) -> list[str]:
    """Items of a list or sequence, by the strongest structure the text shows."""
    s = text.strip()
    markers = [m.start() for m in _NUMBERED.finditer(s)]
    if len(markers) >= 2:
        parts = split_at(s, markers)
    elif any(f.kind == "time" for f in spec.fields) and len(parse_clock_times(s)) >= 2:
        parts = split_at(s, [t.start for t in parse_clock_times(s)])
        parts = [p.rstrip("→->⇒ ") for p in parts]
    elif _ARROWS.search(s):
        parts = split_top_level(s, _ARROWS)
    else:
        seps = r"[。;；\n]|" + _STEP_WORDS.pattern
        if spec.type == "list" or spec.item_separators:
            seps += "|" + (spec.item_separators or r"[、,・]")
        parts = split_top_level(s, re.compile(seps))
    items = [_clean_item(p) for p in parts]
    return [i for i in items if content_length(i) >= 2]


def _clause_with_cue(text: str, cues: list[str], in_item: bool) -> FieldHit | None:
    """The first clause holding a cue. Inside a list item the first clause is the item's own
    subject: a cue there is read but not taken out of the remainder."""
    parts = clauses(text)
    for index, part in enumerate(parts):
        if not any(re.search(cue, part, re.IGNORECASE) for cue in cues):
            continue
        start = text.find(part)
        if in_item and index == 0:
            # the item's own subject: not a separate value (a one-clause item would otherwise
            # give the same text as both its action and its result)
            continue
        return FieldHit(part, None, [(start, start + len(part))])
    return None


def _quantities(text: str, dims: set[str]) -> FieldHit | None:
    found = [q for q in parse_quantities(text) if q.dimension in dims]
    if not found:
        return None
    first = found[0]
    prefix = "約" if first.approx and not first.text.startswith("約") else ""
    display = "・".join(prefix + q.text if i == 0 else q.text for i, q in enumerate(found[:3]))
    norm = f"{first.dimension}:{first.base_value}" if first.base_value is not None else None
    return FieldHit(display, norm, [(q.start, q.end) for q in found[:3]])


# --- one parser per field kind ---------------------------------------------------------------
# Each takes (spec, normalized text, today, in_item) and returns the field's hit or None.
FieldParser = Callable[[FieldSpec, str, date | None, bool], FieldHit | None]


def _quantities_of(*dims: str) -> FieldParser:
    wanted = set(dims)
    return lambda _spec, text, _today, _in_item: _quantities(text, wanted)


def _text_field(spec: FieldSpec, text: str, _today: date | None, in_item: bool) -> FieldHit | None:
    if not spec.cues:
        return FieldHit(text, None, []) if content_length(text) >= 2 else None
    return _clause_with_cue(text, spec.cues, in_item)


def _whole(_spec: FieldSpec, text: str, _today: date | None, _in_item: bool) -> FieldHit | None:
    return FieldHit(text.strip(), None, []) if content_length(text) >= 1 else None


def _heat(_spec: FieldSpec, text: str, _today: date | None, _in_item: bool) -> FieldHit | None:
    heat = parse_heat(text)
    return FieldHit(heat, heat, [(text.find(heat), text.find(heat) + len(heat))]) if heat else None


def _duration(_spec: FieldSpec, text: str, _today: date | None, _in_item: bool) -> FieldHit | None:
    durations = parse_durations(text)
    if not durations:
        return None
    d = next((x for x in durations if x.relative), durations[0])
    display = ("約" if d.approx else "") + format_duration(d.seconds)
    return FieldHit(display, d.seconds, [(d.start, d.end)])


def _time(_spec: FieldSpec, text: str, _today: date | None, _in_item: bool) -> FieldHit | None:
    times = parse_clock_times(text)
    if not times:
        return None
    t = times[0]
    return FieldHit(t.hhmm, t.hour * 60 + t.minute, [(t.start, t.end)])


def _date(_spec: FieldSpec, text: str, today: date | None, _in_item: bool) -> FieldHit | None:
    dates = parse_dates(text, today)
    if not dates:
        return None
    d = dates[0]
    return FieldHit(d.text, d.value.isoformat() if d.value else d.text, [(d.start, d.end)])


def _due(_spec: FieldSpec, text: str, today: date | None, _in_item: bool) -> FieldHit | None:
    due = parse_due(text, today)
    if due is None:
        return None
    start = text.find(due.text)
    norm = due.date.isoformat() if due.date else (due.within_seconds or due.text)
    return FieldHit(due.text, norm, [(start, start + len(due.text))] if start >= 0 else [])


def _owner(_spec: FieldSpec, text: str, _today: date | None, _in_item: bool) -> FieldHit | None:
    found = find_owner(text)
    return FieldHit(found[0], found[0].casefold(), [found[1:]]) if found else None


def _refs_of(*, urls_only: bool) -> FieldParser:
    def parse(_spec: FieldSpec, text: str, _today: date | None, _in_item: bool) -> FieldHit | None:
        refs = parse_refs(text)
        if urls_only:
            refs = [r for r in refs if "://" in r]
        if not refs:
            return None
        spans = []
        for ref in refs:
            at = text.lower().find(ref.lower().split("://")[-1][:20])
            if at >= 0:
                spans.append(
                    (max(0, text.rfind("http", 0, at + 1)) if "://" in ref else at, at + len(ref))
                )
        return FieldHit(", ".join(refs), refs[0], spans)

    return parse


def _found_by(finder: Callable[[str], tuple[str, int, int] | None]) -> FieldParser:
    def parse(_spec: FieldSpec, text: str, _today: date | None, _in_item: bool) -> FieldHit | None:
        found = finder(text)
        return FieldHit(found[0], None, [found[1:]]) if found else None

    return parse


def _condition(_spec: FieldSpec, text: str, _today: date | None, _in_item: bool) -> FieldHit | None:
    m = _CONDITION.search(text)
    return FieldHit(m.group("cond").strip(), None, [m.span("cond")]) if m else None


def _category(spec: FieldSpec, text: str, _today: date | None, _in_item: bool) -> FieldHit | None:
    for label, words in spec.values.items():
        if any(w.lower() in text.lower() for w in words):
            return FieldHit(label, label, [])
    return None


def _bool(_spec: FieldSpec, text: str, _today: date | None, _in_item: bool) -> FieldHit | None:
    if _NO.search(text):
        return FieldHit("不可", False, [])
    if _YES.search(text):
        return FieldHit("可", True, [])
    return None


FIELD_PARSERS: dict[str, FieldParser] = {
    "text": _text_field,
    "magnitude": _quantities_of("count", "percent"),
    "money": _quantities_of("money"),
    "whole": _whole,
    "quantity": _quantities_of("mass", "volume", "count", "vague"),
    "temperature": _quantities_of("temperature"),
    "heat": _heat,
    "duration": _duration,
    "time": _time,
    "date": _date,
    "due": _due,
    "owner": _owner,
    "url": _refs_of(urls_only=True),
    "ref": _refs_of(urls_only=False),
    "criterion": _found_by(find_criterion),
    "command": _found_by(find_command),
    "condition": _condition,
    "category": _category,
    "bool": _bool,
}


def extract_field(
    spec: FieldSpec, text: str, today: date | None = None, *, in_item: bool = False
) -> FieldHit | None:
    """One field of ``spec.kind`` from normalized ``text`` (``remainder`` is handled by the caller;
    an unknown kind finds nothing)."""
    parser = FIELD_PARSERS.get(spec.kind)
    return parser(spec, text, today, in_item) if parser else None


def _remainder(text: str, spans: list[tuple[int, int]]) -> str | None:
    chars = list(text)
    for a, b in spans:
        for i in range(max(0, a), min(len(chars), b)):
            chars[i] = _HOLE
    rest = _drop_residue("".join(chars)).replace(_HOLE, " ")
    rest = re.sub(r"\([\s、,・/]*\)", "", rest)
    rest = re.sub(r"\s*([、,])(?:\s*[、,])+", r"\1", rest)
    rest = re.sub(r"\s+", " ", rest).strip(" 、,。;；:・()→-")
    rest = re.sub(r"^(?:頃|ごろ)\s*[、,]?\s*", "", rest)
    rest = re.sub(r"(?:です|でした|になります|ます|だ)[。.]?$", "", rest).strip(" 、,。")
    rest = re.sub(r"^(?:には|では|とは|は|が|を|で|に|と)(?=[\s、,]|$)", "", rest).strip(" 、,")
    # a topic whose value was taken out (「…。 、期限は」) is a fragment, not part of the value
    pieces = re.split(r"(?<=[。、,])", rest)
    kept = pieces[:1] + [p for p in pieces[1:] if not _DANGLING.fullmatch(p.strip())]
    rest = re.sub(r"[。]\s*[、,]", "。", "".join(kept)).strip(" 、,;；:。")
    return rest if content_length(rest) >= 1 else None


def _residue(piece: str) -> bool:
    """A clause left over from values taken out: 「 担当、」「 まで、」「 に適用できること」."""
    if _HOLE not in piece:
        return False
    if re.match(rf"^\s*{_HOLE}+\s*(?:には|では|は|が|を|に|で|と|まで|から|の)", piece):
        return True
    return content_length(piece.replace(_HOLE, "")) <= 3


def _drop_residue(text: str) -> str:
    """Remove the residue of taken-out values, inside brackets (a bracket left with nothing goes
    whole) and between clauses; the first clause (the value's head) is always kept."""

    def inner(m: re.Match[str]) -> str:
        parts = re.split(r"(?<=[、,])", m.group(2))
        kept = [p for p in parts if not _residue(p)]
        body = "".join(kept).strip(" 、,")
        return f"{m.group(1)}{body}{m.group(3)}" if content_length(body) else ""

    text = re.sub(r"([(（])([^()（）]*)([)）]|$)", inner, text)
    text = re.sub(rf"{_HOLE}+\s*(?:頃|ごろ)", _HOLE, text)
    pieces = re.split(r"(?<=[、,。])", text)
    return "".join(pieces[:1] + [p for p in pieces[1:] if not _residue(p)])


def _without_label(value: str, spec: FieldSpec) -> str:
    """``成功基準は停止ゼロ`` -> ``停止ゼロ``: the field's own label adds nothing in its column."""
    names = [spec.label, *spec.terms]
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        m = re.match(rf"{re.escape(name)}\s*(?:は|:|：)\s*", value)
        if m and content_length(value[m.end() :]) >= 2:
            return value[m.end() :]
    return value


def parse_fields(
    specs: list[FieldSpec], text: str, today: date | None = None, *, in_item: bool = False
) -> tuple[dict[str, str], dict[str, Any]]:
    fields: dict[str, str] = {}
    norm: dict[str, Any] = {}
    spans: list[tuple[int, int]] = []
    for fspec in specs:
        if fspec.kind == "remainder":
            continue
        hit = extract_field(fspec, text, today, in_item=in_item)
        if hit is None:
            continue
        display = _without_label(hit.display, fspec)
        if fspec.kind == "text" and any(_same(display, v) for v in fields.values()):
            continue  # one clause is one field's value, not two columns saying the same
        fields[fspec.name] = display
        if hit.norm is not None and fspec.kind in COMPARABLE_KINDS:
            norm[fspec.name] = hit.norm
        if fspec.kind not in ("category", "bool"):
            spans.extend(hit.spans)
    for fspec in specs:
        if fspec.kind == "remainder":
            rest = _remainder(text, spans)
            if rest:
                fields[fspec.name] = _without_label(rest, fspec)
    # a cue-found text field that repeats the remainder (the same clause) says nothing more
    for fspec in specs:
        if fspec.kind != "text" or fspec.required or fspec.name not in fields:
            continue
        others = [v for k, v in fields.items() if k != fspec.name]
        if any(_same(fields[fspec.name], v) for v in others):
            del fields[fspec.name]
    return fields, norm


def _same(a: str, b: str) -> bool:
    return _CONTENT.sub("", a).casefold() == _CONTENT.sub("", b).casefold()


def completeness(spec: SlotSpec, fields: dict[str, Any]) -> float:
    required = [f.name for f in spec.fields if f.required]
    total = len(required) + len(spec.require_any)
    if total == 0:
        return 1.0 if fields else 0.0
    found = sum(1 for name in required if fields.get(name))
    found += sum(1 for group in spec.require_any if any(fields.get(n) for n in group))
    return found / total


def items_match(spec: SlotSpec, items: list[dict[str, str]]) -> float:
    if not items:
        return 0.0
    share = min(1.0, len(items) / max(1, spec.min_items))
    if spec.type == "sequence" and spec.fields:
        quality = sum(completeness(spec, item) for item in items) / len(items)
        return round(share * quality, 4)
    return round(share, 4)


def parse_value(spec: SlotSpec, text: str, today: date | None = None) -> ParsedValue:
    """The slot value carried by ``text`` and its normalized match in [0, 1]."""
    s = normalize(text).strip()
    value = ParsedValue(text=s)
    if not s:
        return value
    if spec.type in ("text", "record"):
        value.fields, value.norm = parse_fields(spec.fields, s, today)
        if spec.type == "text":
            length_share = min(1.0, content_length(s) / max(1, spec.min_chars))
            value.normalized_match = round(
                length_share * (completeness(spec, value.fields) if spec.fields else 1.0), 4
            )
        else:
            value.normalized_match = round(completeness(spec, value.fields), 4)
    elif spec.type == "links":
        refs = parse_refs(s)
        value.items = [{"ref": r} for r in refs]
        value.normalized_match = 1.0 if refs else (0.5 if content_length(s) >= 4 else 0.0)
        if not refs and content_length(s) >= 4:
            value.items = [{"ref": item} for item in split_items(s, spec)]
    elif spec.type == "list":
        value.items = [{"text": item} for item in split_items(s, spec)]
        value.normalized_match = items_match(spec, value.items)
    else:  # sequence: items as split, or the whole answer as one item if that reads better
        value.items = _sequence_items(spec, split_items(s, spec), today)
        value.normalized_match = items_match(spec, value.items)
        if len(value.items) > 1 and spec.min_items <= 1:
            whole = _sequence_items(spec, [s], today)
            if items_match(spec, whole) > value.normalized_match:
                value.items, value.normalized_match = whole, items_match(spec, whole)
    return value


def _sequence_items(spec: SlotSpec, parts: list[str], today: date | None) -> list[dict[str, str]]:
    items = []
    for part in parts:
        fields, _ = parse_fields(spec.fields, part, today, in_item=True)
        if fields:
            items.append(fields)
    return items


def none_value(spec: SlotSpec) -> ParsedValue:
    """「特になし」 for a slot that allows it: a complete value."""
    return ParsedValue(text="なし", normalized_match=1.0, is_none=True)


def values_conflict(old: Any, new: Any) -> bool:
    """Comparable values disagree (numbers by more than 10 %, strings case-insensitively)."""
    if old is None or new is None:
        return False
    if isinstance(old, bool) or isinstance(new, bool):
        return old != new
    if isinstance(old, int | float) and isinstance(new, int | float):
        scale = max(abs(old), abs(new), 1e-9)
        return abs(old - new) / scale > 0.1
    if isinstance(old, str) and isinstance(new, str):
        if ":" in old and ":" in new and old.split(":")[0] != new.split(":")[0]:
            return False  # different dimensions (count vs percent) are not comparable
        try:
            a, b = float(old.split(":")[-1]), float(new.split(":")[-1])
        except ValueError:
            return old.casefold() != new.casefold()
        scale = max(abs(a), abs(b), 1e-9)
        return abs(a - b) / scale > 0.1
    return False
