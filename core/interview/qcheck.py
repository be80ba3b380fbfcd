"""Question quality check (Stage07) with the design's decision table (26.1):

| check                                         | verdict | action                                   |
| specificity < 0.7                             | NG      | regenerate once, then the fallback       |
| tacit_power < 0.5                             | WARN    | add a criterion sentence, re-evaluate    |
| string similarity >= θ1 or n-gram dist <= θ2  | DUP     | reject, the caller moves to another slot |
| longer than N characters                      | UX      | compress to two sentences                |

specificity (10.9): the share of the slot's structured attributes (units, constraints, times,
fields: the slot's ``terms``) the question mentions. tacit_power: 0.5 for asking for an
implicit premise, intent or criterion (判断基準・前提・理由 …) plus 0.5 for eliciting a concrete,
structured answer (具体的・どのくらい・時系列 …). Every reason is returned for the WAL.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from core.interview.domains import SlotSpec
from core.interview.normalizers import normalize
from core.interview.qgen import Draft
from core.interview.similarity import is_duplicate
from core.interview.state import QCheckEvent, QCheckResult

SPECIFICITY_MIN = 0.7
TACIT_MIN = 0.5
MAX_CHARS = 110  # N

_TACIT = re.compile(
    r"判断基準|基準|前提|理由|なぜ|意図|根拠|条件|観点|目安|決め手|背景|判断|見極め"
)
_ELICIT = re.compile(
    r"具体|どのように|どの程度|どのくらい|どれくらい|どうやって|形式|例えば|例:|時系列|それぞれ|"
    r"順番|順に|内訳|何を|何が|どんな|いつ|誰|何人|何分|何日|単位|URL|番号|一文|数字|何時"
)
_SENTENCE = re.compile(r"[^。？?！!]+[。？?！!]?")


def specificity(text: str, specs: list[SlotSpec], focus: list[str] | None = None) -> float:
    s = normalize(text).casefold()
    groups: list[list[str]] = []
    for spec in specs:
        groups.extend(spec.term_groups(focus or None))
    if not groups:
        return 1.0 if any(spec.label in text for spec in specs) else 0.5
    hit = sum(1 for g in groups if any(normalize(t).casefold() in s for t in g))
    return round(hit / len(groups), 4)


def tacit_power(text: str) -> float:
    return 0.5 * bool(_TACIT.search(text)) + 0.5 * bool(_ELICIT.search(text))


def compress(text: str, keep_last: str | None = None, max_chars: int = MAX_CHARS) -> str:
    """At most two sentences: the main question (the first with a question mark, else the first)
    and ``keep_last`` (an added criterion sentence) or the next one."""
    sents = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
    if len(sents) <= 2 and len(text) <= max_chars:
        return text
    main = next((s for s in sents if "？" in s or "?" in s), sents[0] if sents else text)
    second = keep_last if keep_last and keep_last != main else None
    if second is None:
        rest = [s for s in sents if s != main]
        second = rest[0] if rest and len(main) + len(rest[0]) <= max_chars else None
    return main + (second or "")


@dataclass(slots=True)
class Checked:
    draft: Draft | None  # None when rejected as a duplicate
    result: QCheckResult
    events: list[QCheckEvent] = field(default_factory=list)


@dataclass(slots=True)
class _Review:
    """What the checks did to one question: the reasons, an event per candidate, the flags."""

    turn: int
    reasons: list[str] = field(default_factory=list)
    events: list[QCheckEvent] = field(default_factory=list)
    regenerated: bool = False
    fell_back: bool = False
    appended: bool = False
    compressed: bool = False

    def event(self, draft: Draft, status: str, reasons: list[str], failed: bool) -> None:
        self.events.append(
            QCheckEvent(
                turn=self.turn,
                slots=draft.slots,
                text=draft.core,
                status=status,
                reasons=reasons,
                failed=failed,
            )
        )

    def failed(self, draft: Draft, reason: str) -> None:
        self.reasons.append(reason)
        self.event(draft, "ng", [reason], failed=True)

    def result(self, specificity: float, tacit: float, status: str) -> QCheckResult:
        return QCheckResult(
            specificity=specificity,
            tacit_power=tacit,
            status=status,
            reasons=self.reasons,
            regenerated=self.regenerated,
            fallback=self.fell_back,
            compressed=self.compressed,
            appended_criterion=self.appended,
        )


def run_qcheck(
    draft: Draft,
    specs: dict[str, SlotSpec],
    asked: list[str],
    *,
    turn: int,
    regenerate: Callable[[Draft], Draft],
    fallback: Callable[[Draft], Draft],
    scores: tuple[float | None, float | None] = (None, None),
) -> Checked:
    """Apply the decision table; ``scores`` are an LLM's (specificity, tacit_power) if any."""
    targets = [specs[n] for n in draft.slots if n in specs]
    review = _Review(turn)

    def spec_of(d: Draft, external: float | None = None) -> float:
        if d.source in ("clarify", "fallback", "structured"):
            return 1.0
        return external if external is not None else specificity(d.core, targets, d.focus)

    score = spec_of(draft, scores[0])
    if score < SPECIFICITY_MIN:
        review.failed(draft, f"specificity<{SPECIFICITY_MIN} ({score:.2f})")
        draft = regenerate(draft)
        review.regenerated = True
        score = spec_of(draft)
        if score < SPECIFICITY_MIN:
            review.failed(
                draft, f"regenerated specificity<{SPECIFICITY_MIN} ({score:.2f}): fallback"
            )
            draft = fallback(draft)
            review.fell_back = True
            score = spec_of(draft)
    external = scores[1] if not review.regenerated else None  # scored the first draft
    tacit = external if external is not None else tacit_power(draft.core)
    criterion = None
    if tacit < TACIT_MIN and draft.source != "clarify":
        review.reasons.append(f"tacit_power<{TACIT_MIN} ({tacit:.2f}): criterion added")
        criterion = targets[0].criterion if targets else "判断の基準があれば教えてください。"
        draft.core = f"{draft.core}{criterion}"
        review.appended = True
        tacit = tacit_power(draft.core)
    if is_duplicate(draft.core, asked):
        review.reasons.append("duplicate of an earlier question")
        review.event(draft, "dup", list(review.reasons), failed=True)
        return Checked(None, review.result(score, tacit, "dup"), review.events)
    if len(draft.text) > MAX_CHARS:
        review.reasons.append(f"length>{MAX_CHARS}: compressed to two sentences")
        draft.core = compress(draft.core, criterion)
        if len(draft.text) > MAX_CHARS:
            draft.preface = ""
        review.compressed = True
    # the accepted candidate's own verdict; the question's status also counts the failed ones
    own = "warn" if review.appended else "ux" if review.compressed else "ok"
    review.event(draft, own, list(review.reasons), failed=False)
    status = "ng" if review.fell_back or review.regenerated else own
    return Checked(draft, review.result(score, tacit, status), review.events)
