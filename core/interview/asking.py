"""Act: turn the decision into the question the user sees.

For each ask candidate (the chosen action first, then the next best when QCheck rejects a
duplicate): Stage06 generation (templates, or the LLM with the template as example and the
default question as fallback) -> Stage07 QCheck (``qcheck.run_qcheck``: regenerate once, then
fallback; criterion sentence; duplicate -> next slot; compression) -> the journalist preface or
the LLM refinement. Every QCheck verdict with a reason goes to the WAL as
``qcheck_fail_reason``; the accepted question is recorded in the session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.interview.domains import SlotSpec
from core.interview.params import VoIParams
from core.interview.parsing import COMPARABLE_KINDS
from core.interview.qcheck import MAX_CHARS, Checked, compress, run_qcheck, specificity
from core.interview.qgen import Draft, TemplateQuestionGenerator, fallback_question
from core.interview.state import ActionScore, Decision, Fact, QuestionRecord, SessionState

Emit = Callable[[str, dict[str, Any]], None]
MAX_PREFACED_CHARS = 130


def ack_values(facts: list[Fact], specs: dict[str, SlotSpec]) -> list[str]:
    """Up to two numbers, times or amounts the user just gave (for the acknowledgement)."""
    values: list[str] = []
    for fact in facts:
        if fact.mode not in ("targeted", "bundled", "llm"):
            continue
        spec = specs.get(fact.slot_name)
        kinds = {f.name: f.kind for f in spec.fields} if spec else {}
        for row in [fact.fields, *fact.items[:2]]:
            for name, value in row.items():
                wanted = kinds.get(name) in COMPARABLE_KINDS | {"quantity"}
                if wanted and value and any(c.isdigit() for c in str(value)):
                    values.append(str(value))
    return list(dict.fromkeys(values))[:2]


class QuestionAsker:
    def __init__(self, params: VoIParams, llm: Any = None) -> None:
        self.params = params
        self.llm = llm
        self.templates = TemplateQuestionGenerator()

    def generate(
        self, state: SessionState, specs: dict[str, SlotSpec], action: ActionScore, emit: Emit
    ) -> Draft:
        asked = [q.core for q in state.questions]
        draft = self.templates.generate(state, specs, action, asked)
        if self.llm is None or draft.source == "clarify":
            return draft
        generated = self.llm.generate_question(state, specs, action, draft)
        if generated is None:
            emit("llm_fallback", {"stage": "qgen", "slots": action.slots})
            return fallback_question(specs, action.slots)
        return generated

    def ask(
        self,
        state: SessionState,
        specs: dict[str, SlotSpec],
        decision: Decision,
        ack: str,
        now: float,
        emit: Emit,
    ) -> bool:
        """Ask the best acceptable question; False when every candidate was rejected."""
        asked = [q.core for q in state.questions]
        actions = [
            a for a in decision.candidates if a.action == "ask" and a.voi >= self.params.tau_stop
        ]
        for action in actions:
            checked = self._checked_draft(state, specs, action, asked, emit)
            if checked.draft is None:
                continue
            final = checked.draft
            final.preface = ack if len(ack) + len(final.core) <= MAX_PREFACED_CHARS else ""
            if self.llm is not None and final.source != "clarify":
                self._refine(state, specs, final)
            if action is not decision.candidates[0]:
                decision = _reassigned(decision, action)
            self._record(state, decision, action, final, checked.result, now)
            emit(
                "question",
                {
                    "turn": state.turn,
                    "slots": final.slots,
                    "voi": action.voi,
                    "source": final.source,
                    "text": final.text,
                    "reason": decision.reason,
                },
            )
            return True
        return False

    def _checked_draft(
        self,
        state: SessionState,
        specs: dict[str, SlotSpec],
        action: ActionScore,
        asked: list[str],
        emit: Emit,
    ) -> Checked:
        """A question for ``action`` through QCheck (regenerated or replaced when it fails);
        the check's events go to the session's log and, with their reasons, to ``emit``."""
        draft = self.generate(state, specs, action, emit)
        scores: tuple[float | None, float | None] = (None, None)
        if self.llm is not None and draft.source == "llm":
            scores = self.llm.check_question(draft, specs)

        def regen(d: Draft) -> Draft:
            if self.llm is not None and d.source == "llm":
                again = self.llm.generate_question(state, specs, action, d)
                if again is not None:
                    return again
            return self.templates.regenerate(state, specs, d)

        checked = run_qcheck(
            draft,
            specs,
            asked,
            turn=state.turn,
            regenerate=regen,
            fallback=lambda d: fallback_question(specs, d.slots),
            scores=scores,
        )
        state.qcheck_log.extend(checked.events)
        for ev in checked.events:
            if ev.reasons:
                emit(
                    "qcheck",
                    {
                        "turn": ev.turn,
                        "slots": ev.slots,
                        "status": ev.status,
                        "qcheck_fail_reason": ev.reasons,
                    },
                )
        return checked

    def _refine(self, state: SessionState, specs: dict[str, SlotSpec], final: Draft) -> None:
        """The journalist's 1–2 sentences; kept only if the question still asks what it asked."""
        last = state.messages[-1].answer if state.messages else ""
        refined = self.llm.refine(final.core, last)
        if not refined:
            return
        targets = [specs[n] for n in final.slots if n in specs]
        if specificity(refined, targets, final.focus) + 0.2 < specificity(
            final.core, targets, final.focus
        ):
            return  # the refinement lost attributes the question asked for
        if len(refined) > MAX_CHARS:
            refined = compress(refined)
        final.core, final.preface = refined, ""

    @staticmethod
    def _record(
        state: SessionState,
        decision: Decision,
        action: ActionScore,
        final: Draft,
        result: Any,
        now: float,
    ) -> None:
        filled_at_ask = [n for n in final.slots if state.slots[n].filled and not action.clarify]
        state.questions.append(
            QuestionRecord(
                turn=state.turn,
                ts=now,
                text=final.text,
                core=final.core,
                slots=final.slots,
                action="clarify" if action.clarify else "ask",
                voi=action.voi,
                source=final.source,
                qcheck=result,
                filled_at_ask=filled_at_ask,
            )
        )
        for name in final.slots:
            state.slots[name].asked_count += 1
        state.pending_targets = list(final.slots)
        state.pending_clarify = action.clarify
        state.last_question = final.text
        state.last_decision = decision
        state.hypothesis.action_cost = round(state.hypothesis.action_cost + action.cost, 4)


def _reassigned(decision: Decision, action: ActionScore) -> Decision:
    """The decision moved to a lower-ranked action (the best one's question was a duplicate)."""
    return decision.model_copy(
        update={
            "slots": action.slots,
            "voi": action.voi,
            "clarify": action.clarify,
            "reason": decision.reason + "（重複を避けるため次点の項目に再配分しました）",
        }
    )
