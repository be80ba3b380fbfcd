"""The LLM path (design 3.3, 10.5, 10.6): JSON-strict prompts for extraction (Stage02), slot
proposal (Stage04), question generation (Stage06), QCheck (Stage07) and the journalist
refinement, through the workbench's one LLM port (``core.generation.llm``).

Every reply must be bare JSON (a code fence is invalid) and is validated against the design's
schemas (appendix A) with Pydantic (``LLMPort.complete_json``: an invalid reply is sent back once
with the validation error; transport failures are retried inside the time budget). Then the
caller falls back: rule-based extraction, the domain's default question, the rule-based QCheck
scores, the unrefined question, no extra slots. The calls of one turn share one budget
(``WB_LLM_ANSWER_BUDGET_SEC``) and are recorded (``take_calls``) for the audit log.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections import Counter
from datetime import date
from typing import Any, TypeVar

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from core.errors import LLMError
from core.generation.llm import Budget, LLMPort, llm_port
from core.interview.answers import classify_answer, detect_language, is_correction
from core.interview.domains import DomainSpec, SlotSpec
from core.interview.extraction import Extraction, SlotCandidate
from core.interview.kg import KGEntity, KGRelation
from core.interview.parsing import COMPARABLE_KINDS, completeness, extract_field, parse_value
from core.interview.qgen import Draft
from core.interview.slots import CONF_INCIDENTAL
from core.interview.state import ActionScore, SessionState
from core.schemas.answer import LLMCall
from core.settings import Settings

log = logging.getLogger(__name__)

RULES = (
    "出力は JSON のみ。コードフェンス（```）、説明文、前置きは禁止。"
    "指定したスキーマ以外のキーを加えない。"
)


class SlotValueOut(BaseModel):
    slot_name: str
    value: str = Field(min_length=1)
    fields: dict[str, str] = Field(default_factory=dict)
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)


class ExtractionOut(BaseModel):
    """KGPayload (appendix A) plus the slot values (the design's save_kv)."""

    entities: list[KGEntity]
    relations: list[KGRelation]
    slot_values: list[SlotValueOut] = Field(default_factory=list)


class SlotProposalOut(BaseModel):
    name: str = Field(min_length=1, max_length=40)
    description: str = Field(min_length=1)
    type: str | None = None


class QuestionOut(BaseModel):
    slot_name: str
    text: str = Field(min_length=4)


class QCheckOut(BaseModel):
    slot_name: str
    text: str
    specificity: float | None = Field(default=None, ge=0.0, le=1.0)
    tacit_power: float | None = Field(default=None, ge=0.0, le=1.0)


class RefineOut(BaseModel):
    text: str = Field(min_length=4, max_length=200)


def parse_strict(text: str) -> Any:
    """Bare JSON only: a code fence or any text around the JSON is invalid."""
    s = (text or "").strip()
    if s.startswith("```") or s.endswith("```"):
        raise ValueError("code fences are not allowed")
    return json.loads(s)


ItemT = TypeVar("ItemT")


def _listed(value: Any, key: str) -> Any:
    return value.get(key, value) if isinstance(value, dict) and key in value else value


def _describe_slot(spec: SlotSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "label": spec.label,
        "description": spec.description,
        "fields": [{"name": f.name, "label": f.label} for f in spec.fields],
    }


EXTRACT_SYSTEM = (
    "あなたはインタビュー記録の抽出器です。回答から知識グラフの entities と relations、"
    "そしてスロットの値 slot_values を抽出してください。回答に書かれていない値は作らないこと。"
)


def _extraction_payload(
    text: str, state: SessionState, specs: dict[str, SlotSpec], targets: list[str]
) -> dict[str, Any]:
    """Stage02's request: the question, the target and other slots, the answer, the schema."""
    return {
        "topic": state.topic,
        "domain": state.goal_kind,
        "question": state.last_question,
        "target_slots": [_describe_slot(specs[t]) for t in targets if t in specs],
        "other_slots": [_describe_slot(s) for n, s in specs.items() if n not in targets],
        "answer": text[:4000],
        "schema": {
            "entities": [{"id": "str", "label": "str", "type": "str", "confidence": "0..1"}],
            "relations": [{"source": "id", "target": "id", "type": "str", "confidence": "0..1"}],
            "slot_values": [
                {
                    "slot_name": "str",
                    "value": "str",
                    "fields": {"field": "str"},
                    "confidence": "0..1",
                }
            ],
        },
    }


def _slot_candidate(
    sv: SlotValueOut, spec: SlotSpec, targeted: bool, today: date | None = None
) -> SlotCandidate:
    """An LLM slot value as a candidate: re-parsed with the slot's normalizers, the fields the
    LLM gave kept (with comparable values where the field kind has them); a value for a slot
    that was not asked about is incidental and capped at ``CONF_INCIDENTAL``."""
    value = parse_value(spec, sv.value, today)
    for fspec in spec.fields:
        given = sv.fields.get(fspec.name)
        if not given:
            continue
        value.fields[fspec.name] = given
        hit = extract_field(fspec, given, today) if fspec.kind in COMPARABLE_KINDS else None
        if hit is not None and hit.norm is not None:
            value.norm[fspec.name] = hit.norm
    if value.normalized_match <= 0 and sv.fields:
        value.normalized_match = completeness(spec, value.fields)
    return SlotCandidate(
        slot=spec.name,
        text=sv.value[:1000],
        fields=value.fields,
        norm=value.norm,
        items=value.items,
        confidence=sv.confidence if targeted else min(sv.confidence, CONF_INCIDENTAL),
        normalized_match=value.normalized_match,
        mode="llm" if targeted else "incidental",
        provenance="llm:stage02",
    )


class InterviewLLM:
    """JSON-strict calls through the LLM port; ``None`` tells the caller to fall back."""

    def __init__(self, settings: Settings, port: LLMPort | None = None) -> None:
        self.settings = settings
        self.port = port or llm_port(settings)
        self.stats: Counter[str] = Counter()
        self.calls: list[LLMCall] = []  # since the last ``take_calls``
        self._budget: Budget | None = None

    def take_calls(self) -> list[LLMCall]:
        """The calls made since the last time (one turn's), and a fresh budget for the next."""
        calls, self.calls, self._budget = self.calls, [], None
        return calls

    def call_json(
        self, stage: str, system: str, payload: dict[str, Any], adapter: TypeAdapter[Any]
    ) -> Any:
        if self._budget is None:
            self._budget = Budget(self.settings.llm_answer_budget_sec)
        t0 = time.perf_counter()
        name = f"interview.{stage}"
        try:
            got = self.port.complete_json(
                f"[{stage}] {system}\n{RULES}",
                json.dumps(payload, ensure_ascii=False),
                adapter,
                stage=name,
                budget=self._budget,
                parse=parse_strict,
            )
        except LLMError as exc:
            call = getattr(exc, "call", None) or LLMCall(stage=name, failure="error")
            invalid = call.reason.startswith("invalid JSON")
            self.stats[f"{stage}.calls"] += call.attempts or 1
            self.stats[f"{stage}.invalid" if invalid else f"{stage}.error"] += 1 + invalid
            self.stats[f"{stage}.fallback"] += 1
            log.warning("LLM %s fell back: %s", stage, exc.detail or exc)
            self.calls.append(call.model_copy(update={"outcome": "fallback"}))
            return None
        finally:
            self.stats[f"{stage}.ms"] += int((time.perf_counter() - t0) * 1000)
        self.stats[f"{stage}.calls"] += 1 + got.repaired
        self.stats[f"{stage}.invalid"] += int(got.repaired)
        self.stats[f"{stage}.ok"] += 1
        if got.reply.call is not None:
            self.calls.append(got.reply.call)
        return got.value

    def call_json_list(
        self, stage: str, system: str, payload: dict[str, Any], item: type[ItemT], key: str
    ) -> list[ItemT] | None:
        """``call_json`` for a JSON array of ``item``; an object holding the array under ``key``
        (a common model habit) is accepted too. None when neither validates."""
        out = self.call_json(stage, system, payload, TypeAdapter(list[item] | dict))
        if isinstance(out, dict):
            try:
                return TypeAdapter(list[item]).validate_python(_listed(out, key))
            except ValidationError:
                return None
        return out

    # --- Stage02: extraction ------------------------------------------------------------
    def extract(
        self,
        text: str,
        state: SessionState,
        specs: dict[str, SlotSpec],
        targets: list[str],
        today: date | None = None,
    ) -> Extraction | None:
        payload = _extraction_payload(text, state, specs, targets)
        out = self.call_json("stage02_extract", EXTRACT_SYSTEM, payload, TypeAdapter(ExtractionOut))
        if out is None:
            return None
        result = Extraction(
            kind=classify_answer(text).value,
            language=detect_language(text),
            correction=is_correction(text),
            method="llm",
        )
        for sv in out.slot_values:
            spec = specs.get(sv.slot_name)
            if spec is not None:
                result.candidates.append(_slot_candidate(sv, spec, spec.name in targets, today))
        got = {c.slot for c in result.candidates}
        result.unanswered = [t for t in targets if t not in got]
        result.kg_entities = [e.model_dump() for e in out.entities]
        result.kg_relations = [r.model_dump() for r in out.relations]
        return result

    # --- Stage04: slot proposal ------------------------------------------------------------
    def propose_slots(self, state: SessionState, domain: DomainSpec) -> list[SlotSpec] | None:
        payload = {
            "topic": state.topic,
            "domain": domain.name,
            "kg": {"entities": [], "relations": []},
            "existing_slots": [s.name for s in domain.slots],
            "schema": [{"name": "str", "description": "str", "type": "str?"}],
        }
        system = (
            "テーマに固有で、既存スロットにない補助スロットを最大2件提案してください。"
            "出力は [{name, description, type?}] の配列。"
        )
        out = self.call_json("stage04_slots", system, payload, TypeAdapter(list[SlotProposalOut]))
        if out is None:
            return None
        specs: list[SlotSpec] = []
        existing = {s.name for s in domain.slots}
        for proposal in out[:2]:
            name = "x_" + re.sub(r"\W+", "_", proposal.name.strip()).strip("_")[:30]
            if name in existing or name == "x_":
                continue
            label = proposal.name.strip()[:20]
            question = f"{label}について、具体的に教えてください。{proposal.description[:60]}"
            specs.append(
                SlotSpec(
                    name=name,
                    label=label,
                    description=proposal.description[:200],
                    type="text",
                    importance=0.3,
                    terms=[[label]],
                    questions=[question],
                    default_question=question,
                )
            )
        return specs

    # --- Stage06: question generation -----------------------------------------------------
    def generate_question(
        self, state: SessionState, specs: dict[str, SlotSpec], action: ActionScore, example: Draft
    ) -> Draft | None:
        payload = {
            "topic": state.topic,
            "slots": [
                {
                    "slot_name": n,
                    "label": specs[n].label,
                    "description": specs[n].description,
                    "must_mention": [g[0] for g in specs[n].term_groups()],
                }
                for n in action.slots
            ],
            "template_example": [{"slot_name": action.slots[0], "text": example.core}],
            "last_answer": state.messages[-1].answer[:500] if state.messages else "",
            "schema": [{"slot_name": "str", "text": "str"}],
        }
        system = (
            "インタビューの次の質問を日本語で1つ作ってください。対象スロットの must_mention を含め、"
            "具体的に、1〜2文で。出力は [{slot_name, text}] の配列。"
        )
        out = self.call_json_list("stage06_qgen", system, payload, QuestionOut, "questions")
        if not out:
            return None
        chosen = next((q for q in out if q.slot_name in action.slots), out[0])
        return Draft(list(action.slots), chosen.text.strip(), "llm", focus=example.focus)

    # --- Stage07: QCheck -------------------------------------------------------------------
    def check_question(
        self, draft: Draft, specs: dict[str, SlotSpec]
    ) -> tuple[float | None, float | None]:
        payload = {
            "questions": [{"slot_name": draft.slots[0], "text": draft.core}],
            "slot": {
                "label": specs[draft.slots[0]].label,
                "attributes": [g[0] for g in specs[draft.slots[0]].term_groups()],
            },
            "schema": [
                {"slot_name": "str", "text": "str", "specificity": "0..1", "tacit_power": "0..1"}
            ],
        }
        system = (
            "質問の品質を採点してください。specificity: 単位・制約・時刻など構造化属性の含有率。"
            "tacit_power: 前提・意図・判断基準を引き出す度合い。出力は配列。"
        )
        out = self.call_json_list("stage07_qcheck", system, payload, QCheckOut, "checks")
        if not out:
            return None, None
        return out[0].specificity, out[0].tacit_power

    # --- journalist refinement -------------------------------------------------------------
    def refine(self, draft: str, last_answer: str) -> str | None:
        payload = {"draft": draft, "last_answer": last_answer[:500], "schema": {"text": "str"}}
        system = (
            "記者のように、相手の直前の回答に一言共感してから質問する1〜2文に整えてください。"
            '質問の中身（聞く項目）は変えないこと。出力は {"text": ...}。'
        )
        out = self.call_json("journalist_refine", system, payload, TypeAdapter(RefineOut))
        return out.text.strip() if out is not None else None
