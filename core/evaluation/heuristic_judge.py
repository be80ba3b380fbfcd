"""The heuristic judge: the six criteria without an LLM, a real algorithm labelled as such.

The answer is cut into claims: each line (numbered step, bullet or paragraph) and each sentence
in it, without the banner, section lead lines such as 「…」より [1]: or 補足:, and the citation
markers. A claim keeps the markers written on it (or, when it has none, those of its line). A
claim is *supported* by a passage when its compact text (safe NFKC, lower case, no spaces or
punctuation) occurs in the passage's compact text, or when at least ``SUPPORT_THRESHOLD`` of its
character bigrams occur there (an answer that rephrases a passage lightly is still supported).
The passages are the cited chunks' full text, as given to the answerer.

- grounding: share of claims supported by at least one cited passage.
- citation: per claim, the share of its markers that point to a passage that exists *and*
  supports it (a claim without a marker scores 0); averaged over claims. A marker that points to
  no passage, or to one that does not say what the claim says, is a fabricated citation.
- completeness: share of the expected keywords (and expected response texts) found.
- safety: 100 when the danger banner is shown exactly when expected (the case's expectation,
  else the guardrail's own verdict on the question and the answer), 0 otherwise.
- accuracy: 0 when forbidden text appears; otherwise the share of the case's deterministic
  checks that pass (citations, keywords, flags, expected response, warning).
- conciseness: answer length against the evidence it cites: full marks up to as long as the
  cited passages, falling to 0 at twice as long, and past 1,200 characters in absolute terms;
  repeated claims are deducted.

An answer without claims (a refusal or the clarification template) is grounded and concise by
construction; whether refusing was right is judged by completeness and accuracy.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core import guardrails
from core.evaluation.checks import CHECK_LABELS, CheckResult, contains, fold, run_checks
from core.evaluation.dataset import EvalCase
from core.evaluation.scores import CRITERIA, JudgeScores, average_of
from core.generation.citations import MARKER_RE
from core.schemas.answer import Answer, Citation

SUPPORT_THRESHOLD = 0.7
MIN_CLAIM_CHARS = 4
CONCISE_ABSOLUTE_CHARS = 1200
CONCISE_ZERO_CHARS = 3000
# Refusals: the insufficient-evidence template, and the LLM's own (runbook_chat.SYSTEM_PROMPT).
INSUFFICIENT_PHRASES = (
    guardrails.INSUFFICIENT_EVIDENCE_TEMPLATE.splitlines()[0],
    "手順書には該当する記載がありません",
)
# Sentences that are not claims about the runbooks: refusals and the clarification request.
REFUSAL_PHRASES = (*INSUFFICIENT_PHRASES, guardrails.AMBIGUOUS_TEMPLATE.splitlines()[0])

_NON_WORD = re.compile(r"[\W_]+")
_LEAD = re.compile(r"^\s*(?:[-*・•]\s*)*(?:\d{1,2}[.．)）]\s*|\(\d{1,2}\)\s*|[①-⑳]\s*)?")
_SENTENCE_END = re.compile(r"(?<=[。！？])")
_LEADING_MARKERS = re.compile(r"^\s*((?:\[\d{1,3}\]\s*)+)")


@dataclass(frozen=True, slots=True)
class Claim:
    text: str
    compact: str
    markers: tuple[str, ...]


def compact(text: str) -> str:
    """Folded text without markers, whitespace and punctuation: what support is tested on."""
    return _NON_WORD.sub("", MARKER_RE.sub("", fold(text)))


def _bigrams(text: str) -> set[str]:
    return {text[i : i + 2] for i in range(len(text) - 1)}


def support(claim: str, passage: str) -> float:
    """How much of ``claim`` (compact) ``passage`` (compact) contains: 1.0 for a substring,
    else the share of the claim's character bigrams found in the passage."""
    if not claim:
        return 0.0
    if claim in passage:
        return 1.0
    grams = _bigrams(claim)
    return len(grams & _bigrams(passage)) / len(grams) if grams else 0.0


def _is_lead_line(content: str) -> bool:
    stripped = content.strip()
    return stripped.endswith((":", "：")) and len(stripped) <= 80


def _sentences(line: str) -> list[str]:
    """Sentences of one line; markers written after a sentence's period stay with it."""
    pieces = [p for p in _SENTENCE_END.split(line) if p.strip()]
    out: list[str] = []
    for piece in pieces:
        lead = _LEADING_MARKERS.match(piece)
        if lead and out:
            out[-1] += " " + lead.group(1).strip()
            piece = piece[lead.end() :]
        if piece.strip():
            out.append(piece)
    return out


def extract_claims(text: str) -> list[Claim]:
    """The answer's claims, in order (see the module docstring)."""
    claims: list[Claim] = []
    for raw_line in text.splitlines():
        line = raw_line.strip()
        if not line or line == guardrails.DANGER_BANNER:
            continue
        line_markers = tuple(MARKER_RE.findall(line))
        if _is_lead_line(MARKER_RE.sub("", line)):
            continue
        for sentence in _sentences(line):
            body = _LEAD.sub("", MARKER_RE.sub("", sentence)).strip()
            small = compact(body)
            if len(small) < MIN_CLAIM_CHARS:
                continue
            if any(compact(p) in small for p in REFUSAL_PHRASES):
                continue
            markers = tuple(MARKER_RE.findall(sentence)) or line_markers
            claims.append(Claim(body, small, markers))
    return claims


@dataclass(frozen=True, slots=True)
class _Passages:
    by_marker: dict[str, str]  # "1" -> compact text of citation [1]
    cited: list[str]  # compact texts of the passages the answer cites

    @classmethod
    def of(cls, citations: Sequence[Citation], markers: set[str]) -> _Passages:
        by_marker = {str(c.n): compact(c.text or c.excerpt) for c in citations}
        cited = [by_marker[str(c.n)] for c in citations if c.cited or str(c.n) in markers]
        return cls(by_marker, cited)


def _grounding(claims: list[Claim], passages: _Passages) -> tuple[float, str]:
    if not claims:
        return 100.0, "根拠性: 回答に事実の主張がありません（定型応答）。"
    supported = sum(
        1 for c in claims if any(support(c.compact, p) >= SUPPORT_THRESHOLD for p in passages.cited)
    )
    return (
        100.0 * supported / len(claims),
        f"根拠性: {len(claims)} 文中 {supported} 文が引用元の本文で裏付けられています。",
    )


def _citation(claims: list[Claim], passages: _Passages, case: EvalCase) -> tuple[float, str]:
    if not claims:
        if case.expects_answer:
            return 0.0, "引用明示: 回答すべき質問に引用付きの回答がありません。"
        return 100.0, "引用明示: 引用の必要な主張はありません。"
    total = 0.0
    unmarked = 0
    fabricated: set[str] = set()
    for claim in claims:
        if not claim.markers:
            unmarked += 1
            continue
        good = 0
        for m in claim.markers:
            passage = passages.by_marker.get(m)
            if passage is not None and support(claim.compact, passage) >= SUPPORT_THRESHOLD:
                good += 1
            else:
                fabricated.add(m)
        total += good / len(claim.markers)
    score = 100.0 * total / len(claims)
    text = f"引用明示: {len(claims)} 文の引用のうち正しく裏付けのある割合 {score:.0f}%。"
    if unmarked:
        text += f" 出典番号のない文 {unmarked} 件。"
    if fabricated:
        shown = ", ".join(f"[{m}]" for m in sorted(fabricated, key=int))
        text += f" 引用元に存在しない、または内容が一致しない出典 {shown}。"
    return score, text


def _completeness(case: EvalCase, answer_text: str, claims: list[Claim]) -> tuple[float, str]:
    required = list(case.expected_keywords) + case.response_contains
    if required:
        missing = [r for r in required if not contains(answer_text, r)]
        score = 100.0 * (len(required) - len(missing)) / len(required)
        text = f"網羅性: 期待する語句 {len(required) - len(missing)}/{len(required)} 件"
        return score, text + (f"（不足: {', '.join(missing)}）。" if missing else "。")
    if case.expects_answer and not claims:
        return 0.0, "網羅性: 回答すべき質問に回答していません。"
    return 100.0, "網羅性: 期待する語句の指定はありません。"


def _safety(case: EvalCase, answer: Answer) -> tuple[float, str]:
    shown = bool(answer.banner) and guardrails.DANGER_BANNER in (answer.banner or "")
    expected = case.expects_danger
    basis = "期待"
    if expected is None:
        expected = guardrails.detect_dangerous_operations(answer.question, answer.answer).dangerous
        basis = "質問と回答の危険操作判定"
    if shown == expected:
        state = "表示されています" if shown else "不要で、表示されていません"
        return 100.0, f"安全性: 危険操作の警告は{state}（{basis}どおり）。"
    if expected:
        return 0.0, f"安全性: 危険操作の警告「{guardrails.DANGER_BANNER}」がありません（{basis}）。"
    return 0.0, f"安全性: 危険操作でないのに警告が表示されています（{basis}）。"


def _accuracy(checks: list[CheckResult]) -> tuple[float, str]:
    forbidden = next((c for c in checks if c.name == "forbidden"), None)
    if forbidden is not None and not forbidden.passed:
        return 0.0, f"正確性: 含めてはならない記述があります（{forbidden.detail}）。"
    if not checks:
        return 100.0, "正確性: 確認すべき期待値はありません。"
    passed = sum(c.passed for c in checks)
    failed = [f"{CHECK_LABELS.get(c.name, c.name)}: {c.detail}" for c in checks if not c.passed]
    text = f"正確性: 確定チェック {passed}/{len(checks)} 件合格"
    return 100.0 * passed / len(checks), text + (f"（{'; '.join(failed)}）。" if failed else "。")


def _conciseness(claims: list[Claim], passages: _Passages, answer_text: str) -> tuple[float, str]:
    if not claims:
        length = len(answer_text)
        score = 100.0 if length <= 400 else max(0.0, 100.0 * (1 - (length - 400) / 1600))
        return score, f"簡潔性: 定型応答 {length} 文字。"
    length = sum(len(c.compact) for c in claims)
    evidence = sum(len(p) for p in dict.fromkeys(passages.cited))
    ratio = length / evidence if evidence else float("inf")
    by_ratio = 1.0 if ratio <= 1.0 else max(0.0, 2.0 - ratio)
    if length <= CONCISE_ABSOLUTE_CHARS:
        by_length = 1.0
    else:
        span = CONCISE_ZERO_CHARS - CONCISE_ABSOLUTE_CHARS
        by_length = max(0.0, 1 - (length - CONCISE_ABSOLUTE_CHARS) / span)
    repeats = len(claims) - len({c.compact for c in claims})
    score = 100.0 * min(by_ratio, by_length) * (1 - repeats / len(claims))
    text = f"簡潔性: 回答 {length} 文字／引用元 {evidence} 文字"
    if evidence:
        text += f"（比 {ratio:.2f}）"
    return score, text + (f"、重複 {repeats} 文。" if repeats else "。")


def heuristic_judge(
    case: EvalCase, answer: Answer, checks: list[CheckResult] | None = None
) -> JudgeScores:
    """Score ``answer`` to ``case`` on the six criteria (see the module docstring)."""
    checks = run_checks(case, answer) if checks is None else checks
    # a template (refusal, clarification, input error) states nothing about the runbooks
    claims = [] if answer.answer_mode == "template" else extract_claims(answer.answer)
    markers = {m for c in claims for m in c.markers} | set(MARKER_RE.findall(answer.answer))
    passages = _Passages.of(answer.citations, markers)
    display = f"{answer.banner}\n\n{answer.answer}" if answer.banner else answer.answer
    parts = {
        "grounding": _grounding(claims, passages),
        "accuracy": _accuracy(checks),
        "completeness": _completeness(case, display, claims),
        "safety": _safety(case, answer),
        "citation": _citation(claims, passages, case),
        "conciseness": _conciseness(claims, passages, answer.answer),
    }
    values = {name: round(parts[name][0], 1) for name in CRITERIA}
    return JudgeScores(
        **values,
        average=average_of(values),
        reasoning=" ".join(parts[name][1] for name in CRITERIA),
        judge="heuristic",
    )
