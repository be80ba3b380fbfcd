"""The deterministic expectations of one case, checked against the pipeline's Answer.

Each check returns a ``CheckResult`` (name, passed, Japanese detail) or ``None`` when the case
does not state that expectation. Text is compared after the runbooks' own normalization (safe
NFKC, so ``（`` equals ``(``), case-insensitively and with whitespace folded, against the text
the operator sees (``Answer.display_text()``: the danger banner, then the answer).

- citations: every expected file is among the cited passages (``[]``: nothing is cited)
- keywords: every expected keyword appears in the answer
- flags: each stated flag equals the answer's flag
- forbidden: no ``should_not_contain`` text appears
- response: every ``expected_response_contains`` text appears
- warning: the ``expected_warning`` text (the danger banner) appears
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from core.evaluation.dataset import EvalCase
from core.schemas.answer import Answer
from core.text.normalize import safe_nfkc

CHECK_LABELS: dict[str, str] = {
    "citations": "引用元",
    "keywords": "キーワード",
    "flags": "フラグ",
    "forbidden": "禁止テキスト",
    "response": "期待応答",
    "warning": "警告表示",
}
FLAG_LABELS: dict[str, str] = {
    "insufficient_evidence": "根拠不足",
    "dangerous_operation": "危険操作",
    "ambiguous_query": "曖昧な質問",
}
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class CheckResult:
    name: str
    passed: bool
    detail: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def fold(text: str) -> str:
    """Normalized for matching: safe NFKC, lower case, whitespace runs folded to one space."""
    return _SPACE.sub(" ", safe_nfkc(text).lower()).strip()


def contains(haystack: str, needle: str) -> bool:
    """``needle`` in ``haystack`` after folding; spaces are optional on both sides."""
    h, n = fold(haystack), fold(needle)
    return n in h or n.replace(" ", "") in h.replace(" ", "")


def same_file(expected: str, actual: str) -> bool:
    """``data/runbooks/x.md`` matches ``x.md``: equal, or one is a path suffix of the other."""
    e = expected.replace("\\", "/").strip().strip("/")
    a = actual.replace("\\", "/").strip().strip("/")
    return a == e or a.endswith("/" + e) or e.endswith("/" + a)


def cited_files(answer: Answer) -> list[str]:
    return list(dict.fromkeys(c.file for c in answer.citations if c.cited))


def check_citations(case: EvalCase, answer: Answer) -> CheckResult | None:
    expected = case.expected_citations
    if expected is None:
        return None
    cited = cited_files(answer)
    if not expected:
        ok = not cited
        detail = "引用なし（期待どおり）" if ok else f"引用すべきでないのに引用: {', '.join(cited)}"
        return CheckResult("citations", ok, detail)
    missing = [e for e in expected if not any(same_file(e, a) for a in cited)]
    if missing:
        got = ", ".join(cited) or "なし"
        return CheckResult("citations", False, f"未引用: {', '.join(missing)}（引用: {got}）")
    return CheckResult("citations", True, f"期待した {len(expected)} 件をすべて引用")


def check_keywords(case: EvalCase, answer: Answer) -> CheckResult | None:
    if not case.expected_keywords:
        return None
    text = answer.display_text()
    missing = [k for k in case.expected_keywords if not contains(text, k)]
    found = len(case.expected_keywords) - len(missing)
    detail = f"{found}/{len(case.expected_keywords)} 件"
    if missing:
        detail += f"（不足: {', '.join(missing)}）"
    return CheckResult("keywords", not missing, detail)


def check_flags(case: EvalCase, answer: Answer) -> CheckResult | None:
    expected = case.expected_flags.given()
    if not expected:
        return None
    actual = answer.flags.model_dump()
    wrong = [name for name, value in expected.items() if actual.get(name) != value]
    if wrong:
        parts = [
            f"{FLAG_LABELS.get(n, n)}: 期待 {'あり' if expected[n] else 'なし'}"
            f" / 実際 {'あり' if actual.get(n) else 'なし'}"
            for n in wrong
        ]
        return CheckResult("flags", False, "、".join(parts))
    return CheckResult("flags", True, f"{len(expected)} 件一致")


def check_forbidden(case: EvalCase, answer: Answer) -> CheckResult | None:
    if not case.should_not_contain:
        return None
    text = answer.display_text()
    present = [t for t in case.should_not_contain if contains(text, t)]
    if present:
        return CheckResult("forbidden", False, f"含まれている: {', '.join(present)}")
    return CheckResult("forbidden", True, f"{len(case.should_not_contain)} 件とも含まれない")


def check_response(case: EvalCase, answer: Answer) -> CheckResult | None:
    wanted = case.response_contains
    if not wanted:
        return None
    text = answer.display_text()
    missing = [w for w in wanted if not contains(text, w)]
    if missing:
        return CheckResult("response", False, f"応答に含まれない: {' / '.join(missing)}")
    return CheckResult("response", True, "期待した文言を含む")


def check_warning(case: EvalCase, answer: Answer) -> CheckResult | None:
    if not case.expected_warning:
        return None
    ok = contains(answer.display_text(), case.expected_warning)
    return CheckResult(
        "warning", ok, "警告を表示" if ok else f"警告「{case.expected_warning}」がない"
    )


CHECKS = (
    check_citations,
    check_keywords,
    check_flags,
    check_forbidden,
    check_response,
    check_warning,
)


def run_checks(case: EvalCase, answer: Answer) -> list[CheckResult]:
    """Every stated expectation of ``case``, in a fixed order."""
    return [r for check in CHECKS if (r := check(case, answer)) is not None]
