"""Question generation (Stage06) from the domain's templates, offline.

First ask: the slot's first template; a re-ask: the next template, or a follow-up naming the
fields still missing when the slot is partly filled; a bundle: the slots' short phrases in one
question; a contradiction check: both values quoted. The journalist-style preface
(acknowledging the last answer in a few words) is added by ``preface``. The LLM path
(``llm.LLMQuestionGenerator``) has the same interface and falls back to these templates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.interview.domains import SlotSpec
from core.interview.fill import missing_fields, slot_view
from core.interview.similarity import is_duplicate
from core.interview.state import ActionScore, SessionState


@dataclass(slots=True)
class Draft:
    slots: list[str]
    core: str
    source: str  # template | followup | bundle | clarify | fallback | structured | llm
    focus: list[str] = field(default_factory=list)  # field names a follow-up asks for
    clarify: str | None = None
    preface: str = ""

    @property
    def text(self) -> str:
        return f"{self.preface}{self.core}" if self.preface else self.core


def _topic(state: SessionState) -> str:
    topic = " ".join(state.topic.split())
    return topic if len(topic) <= 30 else topic[:29] + "…"


def _format(template: str, state: SessionState, spec: SlotSpec, missing: str = "") -> str:
    try:
        return template.format(topic=_topic(state), label=spec.label, missing=missing)
    except (KeyError, IndexError, ValueError):
        return template


def structured_question(spec: SlotSpec, focus: list[str] | None = None) -> str:
    """A question built from the slot's fields: specific by construction."""
    labels = [f.label for f in spec.fields if f.required and (not focus or f.name in focus)]
    what = "・".join(labels) if labels else spec.ask or spec.label
    return (
        f"もう一度だけ伺います。{spec.label}について、{what}を分かる範囲で具体的に教えてください。"
    )


class TemplateQuestionGenerator:
    """Offline Stage06: the domain's templates."""

    name = "template"

    def generate(
        self,
        state: SessionState,
        specs: dict[str, SlotSpec],
        action: ActionScore,
        asked: list[str] | None = None,
    ) -> Draft:
        """The first of the candidate wordings that was not asked before in this session."""
        drafts = self.candidates(state, specs, action)
        for draft in drafts:
            spec = specs.get(draft.slots[0])
            variants = [draft.core, draft.core + (spec.criterion if spec else "")]
            if not any(is_duplicate(v, asked or []) for v in variants):
                return draft
        return drafts[0]

    def candidates(
        self, state: SessionState, specs: dict[str, SlotSpec], action: ActionScore
    ) -> list[Draft]:
        if action.clarify:
            return [self.clarify(state, specs, action.clarify)]
        if len(action.slots) > 1:
            parts = [specs[n].ask or specs[n].label for n in action.slots]
            return [
                Draft(
                    list(action.slots),
                    f"{'と、'.join(parts)}について、それぞれ教えてください。",
                    "bundle",
                ),
                Draft(
                    list(action.slots),
                    f"{'と、'.join(parts)}を、分かる範囲で一つずつ教えてください。",
                    "bundle",
                ),
            ]
        spec = specs[action.slots[0]]
        slot = state.slots[spec.name]
        view = slot_view(state, spec)
        missing = missing_fields(spec, view)
        drafts: list[Draft] = []
        if not view.empty and missing and slot.asked_count > 0:
            focus = [f.name for f in spec.fields if f.label in missing]
            core = _format(spec.followup, state, spec, "・".join(missing[:3]))
            drafts.append(Draft([spec.name], core, "followup", focus=focus))
        start = min(slot.asked_count, len(spec.questions))
        for template in spec.questions[start:] + spec.questions[:start]:
            drafts.append(Draft([spec.name], _format(template, state, spec), "template"))
        drafts.append(Draft([spec.name], structured_question(spec), "structured"))
        return drafts

    def regenerate(self, state: SessionState, specs: dict[str, SlotSpec], draft: Draft) -> Draft:
        """A second attempt after a failed check: the next template, else a structured one."""
        if len(draft.slots) == 1:
            spec = specs[draft.slots[0]]
            if draft.source == "template":
                texts = [_format(t, state, spec) for t in spec.questions]
                others = [t for t in texts if t != draft.core]
                if others:
                    return Draft(draft.slots, others[0], "template")
            return Draft(
                draft.slots, structured_question(spec, draft.focus), "structured", draft.focus
            )
        words = "と".join(specs[n].label for n in draft.slots)
        return Draft(
            draft.slots, f"{words}について、それぞれ具体的に教えてください。", "structured"
        )

    def clarify(self, state: SessionState, specs: dict[str, SlotSpec], cid: str) -> Draft:
        c = next(x for x in state.contradictions if x.id == cid)
        label = specs[c.slot_name].label if c.slot_name in specs else c.slot_name
        core = (
            f"{label}の{c.field}について、先ほどは「{c.old_value}」、今回は「{c.new_value}」と"
            "伺いました。どちらが正しいですか？別の値ならその値を教えてください。"
        )
        return Draft([c.slot_name], core, "clarify", clarify=cid)


def fallback_question(specs: dict[str, SlotSpec], slots: list[str]) -> Draft:
    """The domain's safe default question (design 10.6)."""
    spec = specs[slots[0]]
    return Draft([spec.name], spec.default_question, "fallback")


def preface(
    values: list[str], *, first: bool = False, unanswered: bool = False, answered: bool = False
) -> str:
    """A short acknowledgement of the last answer (the offline journalist)."""
    if first:
        return "了解しました。"
    if unanswered:
        return "承知しました。その点は後回しにします。"
    shown = [v for v in values if v and len(v) <= 16][:2]
    if shown:
        return f"{'・'.join(shown)}、承知しました。"
    return "ありがとうございます。" if answered else ""
