"""What ``metadata`` must not carry: evaluation results, correctness judgements, exclusion
reasons, PASS / FAIL / Gate verdicts (design 7.4, 7.5). Checked on every key at any depth
(English words as whole tokens of snake_case / camelCase keys, Japanese words as substrings) and
on every text value (English on word boundaries, case-insensitive; NFKC-folded first so that
full-width ``ＰＡＳＳ`` counts).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

Issue = tuple[str, str]


# English words in keys, matched on whole tokens (snake_case, kebab-case and camelCase split).
_FORBIDDEN_KEY_TOKEN = re.compile(
    r"^(eval|evals|evaluat\w*|scor\w*|results?|judg\w*|verdicts?|pass|passed|passes|passing"
    r"|fail\w*|gate|gates|gating|correct\w*|incorrect\w*|accura\w*|grade|graded|grading"
    r"|exclu\w*|reasons?|drop|dropped|skip|skipped|removed|ok|ng|passfail)$"
)
# English wording in text values (word boundaries, case-insensitive); NG only in capitals.
_FORBIDDEN_TEXT_EN = re.compile(
    r"\b(evaluat\w*|scor(e|es|ed|ing)|judg\w*|verdicts?|pass(es|ed|ing)?|fail(s|ed|ing|ures?)?"
    r"|gate|gating|correct(ly|ness)?|incorrect\w*|wrong|accuracy|grade[sd]?|grading"
    r"|exclu\w*|dropped|omitted|skipped)\b",
    re.IGNORECASE,
)
_NG = re.compile(r"\bNG\b")
# Japanese wording: evaluation, correctness, verdicts, exclusion.
_FORBIDDEN_JA = (
    "評価",
    "採点",
    "得点",
    "点数",
    "スコア",
    "判定",
    "判断",
    "正誤",
    "正解",
    "不正解",
    "正答",
    "誤答",
    "合否",
    "合格",
    "不合格",
    "ゲート",
    "除外",
    "対象外",
    "不採用",
    "精度",
    "再現率",
    "適合率",
)
_KEY_TOKENS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def forbidden_wording(text: str, *, is_key: bool = False) -> list[str]:
    """The evaluation / verdict / exclusion words found in ``text`` (a metadata key or value)."""
    folded = unicodedata.normalize("NFKC", text)
    found = [word for word in _FORBIDDEN_JA if word in folded]
    if is_key:
        found += [t for t in _KEY_TOKENS.findall(folded) if _FORBIDDEN_KEY_TOKEN.match(t.lower())]
    else:
        found += [m.group(0) for m in _FORBIDDEN_TEXT_EN.finditer(folded)]
        found += [m.group(0) for m in _NG.finditer(folded)]
    return list(dict.fromkeys(found))


def metadata_issues(value: Any, path: str) -> Iterator[Issue]:
    """Forbidden wording anywhere in ``value`` (the metadata object at ``path``)."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            child = f"{path}.{key}"
            words = forbidden_wording(key, is_key=True)
            if words:
                yield (
                    child,
                    f"metadata には評価結果・正誤判断・除外理由・判定（PASS / FAIL / Gate）を"
                    f"含められません（キー名に「{'」「'.join(words)}」）",
                )
            yield from metadata_issues(item, child)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from metadata_issues(item, f"{path}[{index}]")
    elif isinstance(value, str):
        words = forbidden_wording(value)
        if words:
            yield (
                path,
                f"metadata には評価結果・正誤判断・除外理由・判定（PASS / FAIL / Gate）を"
                f"含められません（「{'」「'.join(words)}」）",
            )


__all__ = ["forbidden_wording", "metadata_issues"]
