"""Fill update: merge slot candidates into the session as Facts, detect contradictions,
recompute each slot's ``filled_ratio`` (design 10.2) and update the beliefs (design 10.4).

A slot's value is the merge of its live facts (``slot_view``): answers to a question about the
slot override earlier values field by field, values mentioned in passing only fill gaps, and
list or sequence items accumulate. When a comparable field (a number, a duration, a time, an
owner, a date) disagrees with an earlier answer, a ``Contradiction`` is recorded and the slot
is re-opened (its ratio is capped below ``THETA_FILLED``) until the user settles it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.interview.answers import choose_side
from core.interview.belief import EvidenceFeatures, bigram_cosine, delta, update
from core.interview.domains import SlotSpec
from core.interview.extraction import Extraction, SlotCandidate
from core.interview.parsing import completeness, content_length, items_match, values_conflict
from core.interview.slots import C_MIN, SOURCE_TRUST, combine_sources, filled_ratio
from core.interview.state import Approval, Contradiction, Fact, SessionState

STRONG_MODES = {"targeted", "bundled", "llm", "retrieval", "topic", "clarify"}


@dataclass(slots=True)
class SlotView:
    """The merged value of a slot."""

    text: str = ""
    fields: dict[str, str] = field(default_factory=dict)
    norm: dict[str, Any] = field(default_factory=dict)
    norm_fact: dict[str, str] = field(default_factory=dict)  # field -> fact id holding it
    items: list[dict[str, Any]] = field(default_factory=list)
    is_none: bool = False
    sources: list[str] = field(default_factory=list)
    confidence: float = 0.0
    fact_ids: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.text or self.fields or self.items or self.is_none)


@dataclass(slots=True)
class FillReport:
    updated: list[str] = field(default_factory=list)
    new_facts: list[Fact] = field(default_factory=list)
    contradictions: list[Contradiction] = field(default_factory=list)
    resolved: list[Contradiction] = field(default_factory=list)


def _item_key(spec: SlotSpec, item: dict[str, Any]) -> str:
    time_field = next((f.name for f in spec.fields if f.kind == "time"), None)
    if time_field and item.get(time_field):
        return f"t:{item[time_field]}"
    names = [f.name for f in spec.fields] or list(item)
    joined = "|".join(str(item.get(n, "")) for n in names)
    return "".join(joined.split()).casefold()


def slot_view(state: SessionState, spec: SlotSpec) -> SlotView:
    view = SlotView()
    facts = sorted(state.current_facts(spec.name), key=lambda f: (f.turn, f.ts))
    strong = [f for f in facts if f.mode in STRONG_MODES or f.mode == "inferred"]
    latest = strong[-1] if strong else (facts[-1] if facts else None)
    if latest is not None and latest.is_none:
        view.is_none, view.text = True, "なし"
        view.sources, view.confidence, view.fact_ids = (
            [latest.source_kind],
            latest.confidence,
            [latest.id],
        )
        return view
    items: dict[str, dict[str, Any]] = {}
    newest_items = next((f for f in reversed(strong) if f.items), None)
    for fact in facts:
        if fact.is_none:
            continue
        view.fact_ids.append(fact.id)
        view.sources.append(fact.source_kind)
        view.confidence = max(view.confidence, fact.confidence)
        if fact.mode in STRONG_MODES or not view.text:
            view.text = fact.text
        for name, value in fact.fields.items():
            if name in fact.rejected_fields:
                continue
            if name not in view.fields or fact.mode in STRONG_MODES:
                view.fields[name] = value
                if name in fact.norm:
                    view.norm[name] = fact.norm[name]
                    view.norm_fact[name] = fact.id
        for item in fact.items:
            stale = newest_items is not None and fact is not newest_items
            if stale and spec.type == "sequence" and completeness(spec, item) < 1.0:
                continue  # superseded by a newer, fuller answer
            items[_item_key(spec, item)] = item
    view.items = list(items.values())
    time_field = next((f.name for f in spec.fields if f.kind == "time"), None)
    if time_field and all(i.get(time_field) for i in view.items):
        view.items.sort(key=lambda i: i[time_field])
    return view


def view_match(spec: SlotSpec, view: SlotView) -> float:
    if view.is_none:
        return 1.0
    if spec.type == "text":
        share = min(1.0, content_length(view.text) / max(1, spec.min_chars))
        return share * (completeness(spec, view.fields) if spec.fields else 1.0)
    if spec.type == "record":
        return completeness(spec, view.fields)
    if spec.type == "links":
        return 1.0 if view.items else 0.0
    return items_match(spec, view.items)


def missing_fields(spec: SlotSpec, view: SlotView) -> list[str]:
    """Japanese labels of what the slot still lacks (for follow-up questions and the UI)."""
    if view.is_none:
        return []
    missing: list[str] = []
    if spec.type in ("record", "text"):
        missing = [f.label for f in spec.fields if f.required and not view.fields.get(f.name)]
        for group in spec.require_any:
            if not any(view.fields.get(n) for n in group):
                missing.append("または".join(spec.field(n).label for n in group if spec.field(n)))
        if spec.type == "text" and content_length(view.text) < spec.min_chars:
            missing.append(spec.label)
    elif spec.type == "sequence":
        for f in spec.fields:
            if f.required and any(not i.get(f.name) for i in view.items):
                missing.append(f.label)
        for group in spec.require_any:
            if any(not any(i.get(n) for n in group) for i in view.items):
                missing.append("または".join(spec.field(n).label for n in group if spec.field(n)))
        if len(view.items) < spec.min_items:
            missing.append(f"あと{spec.min_items - len(view.items)}件の{spec.label}")
    elif len(view.items) < spec.min_items:
        missing.append(f"あと{spec.min_items - len(view.items)}件の{spec.label}")
    return missing


def recompute(state: SessionState, spec: SlotSpec, now: float) -> None:
    slot = state.slots[spec.name]
    view = slot_view(state, spec)
    if view.empty:
        ratio = 0.0
    else:
        ratio = filled_ratio(view.confidence, view_match(spec, view), combine_sources(view.sources))
        slot.source_kind = combine_sources(view.sources)
    if any(c.slot_name == spec.name for c in state.open_contradictions()):
        ratio = min(ratio, C_MIN)
    if ratio != slot.filled_ratio:
        slot.last_filled_ts = now
    slot.filled_ratio = ratio


def _new_fact(state: SessionState, spec: SlotSpec, c: SlotCandidate, turn: int, now: float) -> Fact:
    fid = f"f{turn:03d}-{spec.name}-{len(state.facts) + 1}"
    needs_approval = spec.critical or c.source_kind in ("retrieval", "model_infer")
    return Fact(
        id=fid,
        text=c.text,
        impact="critical" if spec.critical else "normal",
        status="pending" if needs_approval else "confirmed",
        slot_name=spec.name,
        fields=dict(c.fields),
        norm=dict(c.norm),
        items=list(c.items),
        mode=c.mode,
        confidence=c.confidence,
        normalized_match=c.normalized_match,
        source_kind=c.source_kind,
        provenance=c.provenance or f"turn:{turn}",
        turn=turn,
        ts=now,
        is_none=c.is_none,
    )


def apply_candidates(
    state: SessionState,
    specs: dict[str, SlotSpec],
    candidates: list[SlotCandidate],
    *,
    turn: int,
    now: float,
    correction: bool = False,
    settling: set[str] | None = None,
) -> FillReport:
    """Add the candidates as facts; ``settling`` names slots whose contradiction is being settled."""
    report = FillReport()
    for c in candidates:
        spec = specs.get(c.slot)
        if spec is None or (not c.is_none and not c.text.strip()):
            continue
        before = slot_view(state, spec)
        fact = _new_fact(state, spec, c, turn, now)
        conflicts = []
        if c.slot not in (settling or set()) and not c.is_none:
            for name, value in c.norm.items():
                old = before.norm.get(name)
                if old is None or not values_conflict(old, value):
                    continue
                old_fact = state.facts[before.norm_fact[name]]
                # a value heard in passing only contradicts when the user says it corrects
                if c.mode in STRONG_MODES or correction:
                    conflicts.append((name, old_fact))
        state.facts[fact.id] = fact
        state.slots[spec.name].evidence_ids.append(fact.id)
        if fact.status == "pending":
            aid = f"a-{fact.id}"
            state.approvals[aid] = Approval(id=aid, fact_id=fact.id)
        for name, old_fact in conflicts:
            label = spec.field(name).label if spec.field(name) else name
            contradiction = Contradiction(
                id=f"c{turn:03d}-{spec.name}-{name}",
                slot_name=spec.name,
                field=label,
                old_value=str(old_fact.fields.get(name, "")),
                new_value=str(fact.fields.get(name, "")),
                old_fact_id=old_fact.id,
                new_fact_id=fact.id,
                turn=turn,
            )
            state.contradictions.append(contradiction)
            report.contradictions.append(contradiction)
        report.new_facts.append(fact)
        recompute(state, spec, now)
        if spec.name not in report.updated:
            report.updated.append(spec.name)
    _update_beliefs(state, report)
    return report


def settle_contradiction(
    state: SessionState,
    specs: dict[str, SlotSpec],
    contradiction_id: str,
    answer: str,
    extraction: Extraction,
    now: float,
) -> Contradiction | None:
    """Apply the user's reply to a contradiction check; unclear replies keep the newer value."""
    c = next((x for x in state.contradictions if x.id == contradiction_id and not x.resolved), None)
    if c is None:
        return None
    spec = specs[c.slot_name]
    fname = next((f.name for f in spec.fields if f.label == c.field), c.field)
    old, new = state.facts[c.old_fact_id], state.facts[c.new_fact_id]
    stated = next(
        (x.norm[fname] for x in extraction.candidates if x.slot == c.slot_name and fname in x.norm),
        None,
    )
    side = choose_side(answer)
    if stated is not None and not values_conflict(old.norm.get(fname), stated):
        winner, losers = old, [new]
    elif stated is not None and not values_conflict(new.norm.get(fname), stated):
        winner, losers = new, [old]
    elif stated is not None:
        winner, losers = None, [old, new]  # a third value: the reply's own fact wins
    elif side == "old":
        winner, losers = old, [new]
    else:
        winner, losers = new, [old]
    for loser in losers:
        if fname not in loser.rejected_fields:
            loser.rejected_fields.append(fname)
    chosen = (
        winner.fields.get(fname)
        if winner
        else next((x.fields.get(fname) for x in extraction.candidates if x.slot == c.slot_name), "")
    )
    c.resolved = True
    how = "" if stated is not None or side else "（判断できないため新しい回答を採用）"
    c.resolution = f"「{chosen}」を採用{how}"
    recompute(state, spec, now)
    return c


def mark_unanswered(state: SessionState, names: list[str]) -> None:
    for name in names:
        if name in state.slots:
            state.slots[name].unanswered_count += 1


def infer_candidates(state: SessionState, specs: dict[str, SlotSpec]) -> list[SlotCandidate]:
    """Slots derivable from others (a checklist from the steps and the validation)."""
    out: list[SlotCandidate] = []
    for spec in specs.values():
        slot = state.slots.get(spec.name)
        if not spec.infer_from or slot is None or slot.filled:
            continue
        if any(f.mode == "inferred" for f in state.current_facts(spec.name)):
            continue
        sources = [specs[n] for n in spec.infer_from if n in specs]
        if not all(state.slots[s.name].filled for s in sources):
            continue
        lines: list[str] = []
        for source in sources:
            for item in slot_view(state, source).items:
                parts = [str(v) for v in item.values() if v]
                if parts:
                    lines.append("□ " + " / ".join(parts[:2]))
        if not lines:
            continue
        items = [{"text": line} for line in lines]
        out.append(
            SlotCandidate(
                slot=spec.name,
                text="\n".join(lines),
                items=items,
                confidence=0.6,
                normalized_match=items_match(spec, items),
                source_kind="model_infer",
                mode="inferred",
                provenance="inferred:" + ",".join(spec.infer_from),
            )
        )
    return out


def _update_beliefs(state: SessionState, report: FillReport) -> None:
    if not report.new_facts:
        state.belief_updated = False
        state.last_supports = []
        return
    contested = {c.new_fact_id for c in report.contradictions} | {
        c.old_fact_id for c in report.contradictions
    }
    h = state.hypothesis
    supports: list[str] = []
    for fact in report.new_facts:
        refuted = fact.id in contested
        others = [f for f in state.current_facts(fact.slot_name) if f.id != fact.id and f.norm]
        redundant = bool(fact.norm) and any(
            all(not values_conflict(o.norm.get(k), v) for k, v in fact.norm.items()) for o in others
        )
        features = EvidenceFeatures(
            cosine=bigram_cosine(fact.text, h.text),
            source_trust=SOURCE_TRUST.get(fact.source_kind, 0.5),
            recency=1.0,
            logic_ok=0.0 if refuted else 1.0,
            redundancy=1.0 if redundant else 0.0,
            polarity_sign=-1 if refuted else 1,
        )
        d = delta(features)
        fact.belief, _ = update(0.5, (0.0, 1.0), abs(d))
        h.belief, h.belief_ci = update(h.belief, h.belief_ci, d)
        if not refuted:
            supports.append(fact.id)
    for c in report.contradictions:
        old = state.facts[c.old_fact_id]
        old.belief, _ = update(old.belief, (0.0, 1.0), -1.0)
    h.slots = [name for name, slot in state.slots.items() if slot.filled]
    state.last_supports = supports
    state.belief_updated = True
