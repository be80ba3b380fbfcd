"""The decision policy as a plugin (design 3.1): ``PolicyProvider`` with ``heuristic_voi``.

A policy maps the session to a ``Decision`` (ask / search / none, the target slots, the VoI and
a Japanese reason). Other policies (bandit, offline_policy, safe_rl) can be registered with
``register_policy``; ``decide_safely`` falls back to ``heuristic_voi`` at once when a custom
policy fails or returns an invalid decision (the design's immediate switch-back).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from core.errors import InputError
from core.interview import adaptation as adapt
from core.interview.domains import SlotSpec
from core.interview.params import VoIParams
from core.interview.slots import Slot
from core.interview.state import ActionScore, Decision, SessionState
from core.interview.voi import delta_filled, median_voi, score_actions

log = logging.getLogger(__name__)


@dataclass(slots=True)
class PolicyContext:
    state: SessionState
    specs: dict[str, SlotSpec]
    params: VoIParams
    now: float
    search: bool = False  # a corpus is attached


@runtime_checkable
class PolicyProvider(Protocol):
    name: str

    def decide(self, ctx: PolicyContext) -> Decision: ...


def _label(ctx: PolicyContext, name: str) -> str:
    spec = ctx.specs.get(name)
    return spec.label if spec else name


def _importance_note(slot: Slot) -> str:
    if slot.importance > slot.base_importance + 1e-9:
        return f"、基準 {slot.base_importance:.2f} から未充足が続くため増重"
    if slot.importance < slot.base_importance - 1e-9:
        return f"、基準 {slot.base_importance:.2f}"
    return ""


def adaptation_note(ctx: PolicyContext, slot: Slot, cost_factor: float) -> str:
    """Where the adapted P(answerable) and cost come from (empty at the priors)."""
    if not ctx.params.adaptive:
        return ""
    x = adapt.p_features(ctx.state, slot)
    parts = []
    if x["rate"]:
        parts.append(f"直近の未回答率 {x['rate']:.2f}")
    if x["slot"]:
        parts.append(f"この項目の未回答 {int(x['slot'])} 回")
    if x["slow"]:
        parts.append(f"応答時間（平均 {ctx.state.adaptation.answer_ema_s:.0f} 秒）")
    if x["spec"]:
        parts.append(f"前回の質問の具体性 {x['spec'] + adapt.SPEC_REF:.2f}")
    notes = []
    if parts:
        notes.append(f"回答可能性は{'・'.join(parts)}から推定しました")
    ema = ctx.state.adaptation.answer_ema_s
    if abs(cost_factor - 1.0) > 1e-9 and ema is not None:
        notes.append(f"コストは平均応答時間 {ema:.0f} 秒から補正しました")
    return "（" + "。".join(notes) + "）" if notes else ""


def explain(ctx: PolicyContext, a: ActionScore) -> str:
    """Why this action: the numbers behind its VoI (with the adapted parameters), in Japanese."""
    labels = [f"「{_label(ctx, n)}」" for n in a.slots]
    if a.clarify:
        c = next((x for x in ctx.state.contradictions if x.id == a.clarify), None)
        if c:
            return (
                f"{labels[0]}の{c.field}が以前の回答（「{c.old_value}」）と今回の回答"
                f"（「{c.new_value}」）で食い違っているため、確認します（VoI {a.voi:.3f}）。"
            )
    if a.action == "search":
        slot = ctx.state.slots[a.slots[0]]
        origin = "前回の検索結果のスコア分布から推定" if slot.search_attempts else "事前値"
        return (
            f"{labels[0]}は手順書コーパスに答えがありそうです（検索性 {a.prob:.2f}、{origin}）。"
            f"質問より低コスト（{a.cost:.2f}）なので先に検索します（VoI {a.voi:.3f}）。"
        )
    if len(a.slots) > 1:
        return (
            f"同じ文脈の{'と'.join(labels)}をまとめて聞くと効率的です"
            f"（相乗効果 {ctx.params.synergy:.2f}、コスト {a.cost:.2f}、VoI {a.voi:.3f}）。"
        )
    slot = ctx.state.slots[a.slots[0]]
    kind = "重要項目" if slot.critical else "補助項目"
    d = delta_filled(slot, ctx.params)
    note = adaptation_note(ctx, slot, adapt.ask_factor(ctx.state, ctx.params))
    plain = a.prob * d * a.value / a.cost if a.cost else 0.0
    focus = f" × 集中度 {a.voi / plain:.2f}" if plain and abs(a.voi - plain) > 1e-9 else ""
    return (
        f"{labels[0]}は{kind}（重要度 {slot.importance:.2f}{_importance_note(slot)}）で"
        f"充足率 {slot.filled_ratio:.2f}。"
        f"質問による期待改善が最大です（VoI {a.voi:.3f} = 回答可能性 {a.prob:.2f}"
        f" × 改善見込み {d:.2f} × 価値 {a.value:.2f} ÷ コスト {a.cost:.2f}{focus}）。{note}"
    )


class HeuristicVoIPolicy:
    """argmax over slots (and bundles) of max(VoI_ask, VoI_search)."""

    name = "heuristic_voi"

    def decide(self, ctx: PolicyContext) -> Decision:
        actions = score_actions(ctx.state, ctx.specs, ctx.params, now=ctx.now, search=ctx.search)
        med = median_voi(ctx.state, ctx.specs, ctx.params, search=ctx.search)
        if not actions or actions[0].voi <= 0:
            return Decision(
                action="none",
                reason="これ以上質問する価値のある項目がありません。",
                candidates=actions[:5],
                max_voi=actions[0].voi if actions else 0.0,
                median_voi=med,
                policy=self.name,
            )
        best = actions[0]
        return Decision(
            action=best.action,
            slots=best.slots,
            voi=best.voi,
            reason=explain(ctx, best),
            candidates=actions[:6],
            max_voi=best.voi,
            median_voi=med,
            policy=self.name,
            clarify=best.clarify,
        )


_POLICIES: dict[str, Callable[[], PolicyProvider]] = {"heuristic_voi": HeuristicVoIPolicy}


def register_policy(name: str, factory: Callable[[], PolicyProvider]) -> None:
    _POLICIES[name] = factory


def get_policy(name: str = "heuristic_voi") -> PolicyProvider:
    if name not in _POLICIES:
        known = "、".join(_POLICIES)
        raise InputError(f"未知の方策です: {name}（使えるのは {known}）")
    return _POLICIES[name]()


def _valid(decision: Decision, ctx: PolicyContext) -> bool:
    if decision.action == "none":
        return True
    if not decision.slots or any(n not in ctx.state.slots for n in decision.slots):
        return False
    contested = {c.slot_name for c in ctx.state.open_contradictions()}
    return all(not ctx.state.slots[n].filled or n in contested for n in decision.slots)


def decide_safely(policy: PolicyProvider, ctx: PolicyContext) -> tuple[Decision, str | None]:
    """The policy's decision, or heuristic_voi's with a warning when it fails or is invalid."""
    if isinstance(policy, HeuristicVoIPolicy):
        return policy.decide(ctx), None
    try:
        decision = policy.decide(ctx)
        if _valid(decision, ctx):
            return decision, None
        problem = "invalid decision"
    except Exception as exc:  # a research policy must never stop the interview
        log.warning("policy %s failed: %s", getattr(policy, "name", "?"), exc)
        problem = str(exc)
    decision = HeuristicVoIPolicy().decide(ctx)
    name = getattr(policy, "name", "?")
    return decision, f"方策 {name} が使えないため heuristic_voi に切り戻しました（{problem}）"
