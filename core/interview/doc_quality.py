"""Document quality: each value the written document shows, checked against what the user said.

For every slot the document renders from the user's answers (values retrieved from a corpus or
inferred by the interviewer are left out: they cite their own source), each shown text value
(a paragraph, a field, a table cell, a list item) is checked:

- **supported**: the value (spaces and punctuation ignored) is a span of one of the user's
  answers (or the topic);
- **own question**: it is a span of an answer to a question about this slot (or of the topic),
  not only of an answer to another question (``cross_slot`` otherwise);
- **fragment**: it starts with a particle cut off from its clause (「は、シフトリーダーの…」), or
  ends with a topic whose value was taken away (「…。 、期限は」);
- **duplicate**: two columns of one row (or two fields of one record) say the same thing, or one
  repeats the other whole.

Normalized kinds (numbers, durations, times, dates, owners, categories, booleans) are shown in
a normalized form and are not span-checked. ``core`` only: no Streamlit.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from core.interview.domains import SlotSpec
from core.interview.fill import slot_view
from core.interview.state import SessionState

SPAN_KINDS = {"text", "remainder", "whole", "criterion", "condition", "command"}
_IGNORED = re.compile(r"[\s、。,.!?！？・()\[\]「」『』→~\-:：/]")
_LEADING_PARTICLE = re.compile(r"^\s*(?:[、,。]|(?:には|では|とは|は|が|を|に|で|と|も)\s*[、,])")
_DANGLING_TOPIC = re.compile(r"[。、,]\s*[、,]|[、,]\s*[^、。,\s]{1,8}(?:は|が)\s*$")


class ValueCheck(BaseModel):
    slot: str
    field: str
    value: str
    supported: bool
    own_question: bool
    fragment: bool


class DocumentQuality(BaseModel):
    values: int = 0
    supported: int = 0
    own_question: int = 0
    fragments: int = 0
    duplicates: int = 0
    problems: list[str] = Field(default_factory=list)
    checks: list[ValueCheck] = Field(default_factory=list)

    @property
    def supported_share(self) -> float:
        return self.supported / self.values if self.values else 1.0

    @property
    def cross_slot(self) -> int:
        return sum(1 for c in self.checks if c.supported and not c.own_question)

    def summary(self) -> dict[str, Any]:
        return {
            "values": self.values,
            "supported_share": round(self.supported_share, 4),
            "fragments": self.fragments,
            "duplicates": self.duplicates,
            "cross_slot": self.cross_slot,
        }


def _key(text: str) -> str:
    return _IGNORED.sub("", text).casefold()


def _repeats(a: str, b: str) -> bool:
    """One column repeats another: equal, or one holds the other whole (「11:10 復旧した」 and
    「復旧した」); short values (a number, a name) may legitimately recur inside a longer one."""
    short, long_ = sorted((a, b), key=len)
    return a == b or (len(short) >= 6 and short in long_)


def _shown_values(spec: SlotSpec, view: Any) -> list[tuple[str, list[tuple[str, str]]]]:
    """Rows of (field, value) pairs the document shows for ``spec`` (one row per record/item)."""
    kinds = {f.name: f.kind for f in spec.fields}
    if spec.type == "text":
        return [("", [("text", view.text)])]
    if spec.type == "record":
        return [("", [(k, v) for k, v in view.fields.items() if kinds.get(k) in SPAN_KINDS])]
    if spec.type == "list":
        return [("", [("item", str(i.get("text", "")))]) for i in view.items]
    if spec.type == "links":
        return [("", [("ref", str(i.get("ref", "")))]) for i in view.items]
    rows = []
    for item in view.items:
        rows.append(("", [(k, str(v)) for k, v in item.items() if kinds.get(k) in SPAN_KINDS]))
    return rows


def document_quality(state: SessionState, specs: dict[str, SlotSpec]) -> DocumentQuality:
    """Check every user-sourced value the document shows against the user's answers."""
    answers = [(m, _key(m.answer)) for m in state.messages if m.answer.strip()]
    out = DocumentQuality()
    for name, spec in specs.items():
        facts = state.current_facts(name)
        if not facts or all(f.source_kind in ("retrieval", "model_infer") for f in facts):
            continue
        view = slot_view(state, spec)
        if view.empty or view.is_none:
            continue
        for _, row in _shown_values(spec, view):
            seen: dict[str, str] = {}
            for field, value in row:
                key = _key(value)
                if not key:
                    continue
                said = [m for m, text in answers if key in text]
                own = [m for m in said if m.kind == "topic" or name in m.targets]
                fragment = bool(_LEADING_PARTICLE.match(value) or _DANGLING_TOPIC.search(value))
                check = ValueCheck(
                    slot=name,
                    field=field,
                    value=value,
                    supported=bool(said),
                    own_question=bool(own),
                    fragment=fragment,
                )
                out.checks.append(check)
                out.values += 1
                out.supported += check.supported
                out.own_question += check.own_question
                if not said:
                    out.problems.append(f"{name}.{field}: 回答に無い「{value[:40]}」")
                elif not own:
                    out.problems.append(f"{name}.{field}: 別の質問への回答から「{value[:40]}」")
                if fragment:
                    out.fragments += 1
                    out.problems.append(f"{name}.{field}: 断片「{value[:40]}」")
                kind = spec.field(field).kind if spec.field(field) else "text"
                same = (
                    None  # a command is extracted from its step on purpose
                    if kind == "command"
                    else next((f for k, f in seen.items() if _repeats(key, k)), None)
                )
                if same is not None:
                    out.duplicates += 1
                    out.problems.append(f"{name}: {same} と {field} が同じ「{value[:40]}」")
                if kind != "command":
                    seen.setdefault(key, field)
    return out
