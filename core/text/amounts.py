"""Questions that ask for an amount of money, and passages that state one.

A price, fee or allowance is a fact a passage states or does not: "How much does the Business
plan cost per user?" or 「オンコール手当っていくら支給されるの？」 is answered by a passage with an
amount in it (¥5,000, $49, 3万円, "free of charge"), never by one that is merely about the same
product or policy. The evidence grade refuses such a question when none of its passages states
an amount (``core.guardrails.EvidenceGrade.amount_missing``), as it does for a name the passages
never mention. Questions about how much *access* or *time* something takes are not about money.
"""

from __future__ import annotations

import re
import unicodedata

# "pay" but not "pay attention"; the nouns of a price, not "rate" (a rate limit) or "pricing" (a
# plan's features)
_MONEY_WORDS = (
    r"cost|costs|costing|charge|charges|charged|pa(?:y|id|ys)(?!\s+attention)|price|priced|fee|fees"
)
_ASKS_EN = re.compile(
    rf"\bhow much\b(?!\s+(?:attention|time|effort|access)\b)[^?.!]*\b(?:{_MONEY_WORDS})\b"
    r"|\bhow expensive\b"
    rf"|\bwhat (?:does|do|did|will|would)\b[^?.!]*\b(?:cost|charge)\b"
    r"|\bwhat (?:is|are|'s) the (?:price|cost|fee)s?\b",
    re.IGNORECASE,
)
# いくら "how much" (in money: a Japanese question asking how much time says どのくらい), 何円, and
# a price noun asked about with どのくらい; a price noun alone is not enough (「料金アラートが
# 鳴ったときの対応」 is about an alert, 「費用対効果」 about value).
_ASKS_JA = re.compile(
    r"いくら|何円|(?:料金|価格|値段|金額|費用|コスト|手当)(?:は|って|が)?(?:どのくらい|どれくらい|どの程度)"
)
_AMOUNT = re.compile(
    r"[$¥€£]\s?\d"
    r"|\d[\d,.]*\s?(?:[万億千]?円|ドル|ユーロ)"
    r"|\d[\d,.]*\s?(?:usd|jpy|eur|dollars?|yen|euros?)\b"
    r"|\b(?:usd|jpy|eur)\s?\d"
    r"|無料|無償|free of charge|no (?:additional )?(?:charge|cost)|at no (?:additional )?cost",
    re.IGNORECASE,
)


def asks_for_amount(question: str) -> bool:
    """Whether ``question`` asks what something costs or pays (a price, fee or allowance)."""
    text = unicodedata.normalize("NFKC", question)
    return bool(_ASKS_EN.search(text) or _ASKS_JA.search(text))


def states_amount(passages: list[str]) -> bool:
    """Whether any of ``passages`` states an amount of money (or that something is free)."""
    return any(_AMOUNT.search(unicodedata.normalize("NFKC", p)) for p in passages)
