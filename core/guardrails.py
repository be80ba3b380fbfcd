"""Guardrails of the runbook chat: ambiguous questions, dangerous operations, weak evidence.

- ``detect_ambiguous_query``: under 5 characters, a bare interrogative (「何」「どう」「なぜ」…), or
  no specific object (no content word beyond interrogatives and generic verbs).
- ``detect_dangerous_operations``: destructive operations the question asks for or the answer
  instructs (verb + object, command patterns, the design's keyword list as the floor on the
  question), each with the phrase that fired and its source; see ``core.danger``.
- ``grade_evidence``: a probability that the retrieved passages answer the question, from scores
  that mean the same thing across queries (raw cosine of the best passage, query-term coverage
  and raw BM25 of the best passages, across languages the coverage of the glossary translations,
  and the best cosine's margin over the corpus). The logistic weights below were fitted by
  ``python -m bench.evidence --fit --held-out``; the design's threshold 0.5 is applied.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from core.danger import DangerMatch, detect
from core.schemas.answer import Answer
from core.text.amounts import Quantity
from core.text.glossary import enough_names
from core.text.tokenize import Tokenizer

# --- templates (the design's wording) ---------------------------------------------------
INSUFFICIENT_EVIDENCE_TEMPLATE = (
    "該当する手順が見つかりませんでした。\n\n"
    "以下の点をご確認ください：\n"
    "- 質問のキーワードを変えて再度お試しください\n"
    "- 手順書に該当する内容が含まれているか確認してください"
)
AMBIGUOUS_TEMPLATE = (
    "質問が曖昧な可能性があります。以下の情報を追加していただけると、より正確な回答ができます：\n\n"
    "- 対象システムや環境\n"
    "- 具体的な操作や手順名\n"
    "- エラーメッセージや状況\n\n"
    "例：「ログインできない」→「Active Directoryへのログインができない。エラーコード: 0x80090308」"
)
DANGER_BANNER = "⚠️ 承認・確認が必要"
# Added to the insufficient-evidence reply when the question's names are not in the passages.
MISSING_NAMES_TEMPLATE = "質問にある{names}は、見つかった手順書の箇所に出てきません。"
# … or in no runbook of the folder at all (``EvidenceGrade.absent``).
ABSENT_NAMES_TEMPLATE = "質問にある{names}は、どの手順書にも出てきません。"
# … or only where a runbook lists what it does not cover (``OUT_OF_SCOPE_HEADING``).
EXCLUDED_NAMES_TEMPLATE = "質問にある{names}は、見つかった手順書では対象外として挙げられています。"
# … when the question asks for a quantity (a price, a period, a frequency, a count, a size)
# and no passage states one of that kind (``core.text.amounts``).
QUANTITY_MISSING_TEMPLATE = (
    "質問は{kind}を尋ねていますが、見つかった手順書の箇所に{kind}の記載がありません。"
)
QUANTITY_NAMES = {
    "money": "金額",
    "charge": "料金・課金",
    "duration": "期間・時間",
    "frequency": "頻度",
    "count": "回数・件数",
    "size": "量・割合",
    "limit": "上限",
    "phone": "電話番号",
}
# A section saying what a runbook does not cover: a name found there is not a name it covers
# ("Out of Scope: Okta, Entra ID…" does not make the playbook an answer about Okta).
# The heading must be that statement, not merely mention it: 「監視対象外の端末の扱い」 is a
# procedure for unmonitored devices, "Configure exclusions" a task.
OUT_OF_SCOPE_HEADING = re.compile(
    r"(?:\d+(?:\.\d+)*\.?\s*)?(?:"
    r"out[ -]of[ -]scope|not (?:in scope|covered)|non-?goals?"
    r"|what (?:this|the) (?:playbook|runbook|document|guide|procedure) (?:does not|doesn't) cover"
    r"|(?:本書|本手順|この手順書|本手順書|本ガイド)?の?"
    r"(?:対象外|適用範囲外|対象範囲外|範囲外|スコープ外|対象としない|扱わない)"
    r"(?:の|な)?(?:もの|こと|事項|内容|範囲|ケース|項目)?"
    r")\s*[:：]?",
    re.IGNORECASE,
)


def out_of_scope(heading_path: Sequence[str]) -> bool:
    """Whether a section's own heading says that it lists what the document does not cover."""
    return bool(heading_path) and bool(OUT_OF_SCOPE_HEADING.fullmatch(heading_path[-1].strip()))


EVIDENCE_THRESHOLD = 0.5


# --- dangerous operations -------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DangerReport:
    matches: tuple[DangerMatch, ...]

    @property
    def dangerous(self) -> bool:
        return bool(self.matches)

    @property
    def matched(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.phrase for m in self.matches))

    @property
    def where(self) -> tuple[str, ...]:  # "question" and/or "answer"
        return tuple(s for s in ("question", "answer") if any(m.source == s for m in self.matches))


def detect_dangerous_operations(question: str, answer: str = "") -> DangerReport:
    """Operations the question asks for and the answer instructs (see ``core.danger``)."""
    return DangerReport(tuple(detect(question, "question") + detect(answer, "answer")))


def mark_dangerous_operations(answer: Answer) -> None:
    """Check the final answer and its question; on a match set the flag, banner and matches."""
    danger = detect_dangerous_operations(answer.question, answer.answer)
    if danger.dangerous:
        answer.flags.dangerous_operation = True
        answer.banner = DANGER_BANNER
        answer.dangerous_terms = list(danger.matched)
        answer.danger = list(danger.matches)


# --- ambiguous questions --------------------------------------------------------------------
INTERROGATIVES = (
    "何", "なに", "なん", "どう", "どうやって", "どうして", "どうすれば", "なぜ", "いつ", "どこ",
    "だれ", "誰", "どれ", "どの", "どんな", "どちら", "いくら", "いくつ",
    "what", "how", "why", "when", "where", "who", "which",
)  # fmt: skip
_FILLER = re.compile(
    r"[\s、。！？!?・…ー〜~「」『』()（）]|"
    r"(ですか|ますか|でしょうか|ですが|ください|下さい|教えて|知りたい|について|とは|って|"
    r"すれば|したら|する|して|します|いい|よい|良い|の|は|が|を|に|で|と|も|か|よ|ね|な)"
)
GENERIC_WORDS = {
    "方法", "手順", "対応", "やり方", "こと", "もの", "件", "場合", "とき", "時", "問題", "エラー",
    "確認", "設定", "作業", "操作", "それ", "これ", "あれ", "どれ", "状況", "感じ", "全部", "全て",
    "教える", "知る", "分かる", "わかる", "できる", "行う", "する", "いる", "ある", "なる", "思う",
    "言う", "聞く", "見る", "良い", "いい", "よい", "ない", "欲しい", "ほしい", "困る",
}  # fmt: skip


def is_blank_question(question: str) -> bool:
    """Nothing visible: whitespace, zero-width and other format or control characters only."""
    return all(ch.isspace() or unicodedata.category(ch) in ("Cf", "Cc", "Zs") for ch in question)


def has_no_words(question: str) -> bool:
    """Visible but without a letter or digit in any script (emoji, marks, punctuation only)."""
    return not any(ch.isalnum() for ch in question)


def detect_ambiguous_query(question: str, tokenizer: Tokenizer) -> bool:
    """True when the question lacks a specific object (the design's three criteria)."""
    text = question.strip()
    if len(text) < 5 or has_no_words(text):
        return True
    stripped = _FILLER.sub("", text.lower())
    if not stripped or stripped in INTERROGATIVES:
        return True
    content = [t for t in tokenizer.tokenize(text) if t not in INTERROGATIVES]
    specific = [t for t in content if len(t) >= 2 and t not in GENERIC_WORDS]
    return not specific


# --- evidence grading -----------------------------------------------------------------------
# Logistic regression over features that mean the same thing across queries and languages:
#   cosine        raw cosine of the best passage (multilingual-e5: the same scale for every query
#                 of one language pair, but a lower scale across languages)
#   coverage      share of the query's content terms found in the top 3 passages *of the
#                 question's script*; missing (0 here, with ``cross`` = 1) when none of them
#                 shares it, because no keyword can match across languages
#   bm25          log1p of the best raw BM25 (Latin names such as "VPN" or "EDR" still match
#                 across languages)
#   cross         1 when coverage is missing (the question and the passages are in different
#                 scripts): the bias of the cross-language pair
#   cross_cosine  the cosine again when ``cross`` is 1: the cross-language slope of the cosine
#   cross_coverage when ``cross`` is 1: share of the question's glossary terms, translated, and
#                 of the names it carries unchanged (CrowdStrike, SEV-1) found in the top 3
#                 passages (``core.text.glossary``): a Japanese question about a product the
#                 English runbooks never name is not answered from their general advice
#   margin        the best cosine minus the mean cosine of the vector candidates ranked 5-20:
#                 how far the best passage stands out of this corpus (raw cosines shift with
#                 the corpus and the language pair; the margin is measured against the corpus)
# Fitted by ``WB_DATASETS_DIR=… python -m bench.evidence --fit --held-out`` on
# eval/evidence_calibration.json (Japanese questions over the sample runbooks, and
# Japanese->English, English->Japanese and English->English groups over runbooks we wrote) and
# on bench/evidence_pagerduty.json over the PagerDuty translations (development data: a
# Japanese question whose answer is in the English copy, and the reverse); leave-one-group-out
# error per language pair is printed there. Checked on the separate questions of
# ``python -m bench.answer_trust`` (README).
EVIDENCE_FEATURES = (
    "cosine",
    "coverage",
    "bm25",
    "cross",
    "cross_cosine",
    "cross_coverage",
    "margin",
)
EVIDENCE_WEIGHTS = {
    "bias": -29.75,
    "cosine": 26.45,
    "coverage": 2.96,
    "bm25": 2.49,
    "cross": 0.76,
    "cross_cosine": 1.09,
    "cross_coverage": 2.63,
    "margin": 40.46,
}
MARGIN_FROM, MARGIN_TO = 4, 20  # the cosines the best one is compared with (ranks 5-20)
# A corpus of fewer than five passages (one runbook just added) has no field for the best
# passage to stand out of, and BM25's inverse document frequencies mean nothing over a handful of
# passages: there the margin and the raw BM25 are unknown and taken as the means of the
# answerable calibration questions, so that cosine and keyword coverage decide.
MARGIN_PRIOR = 0.041
BM25_PRIOR = 4.95
# In a folder of fewer runbooks than this, BM25's inverse document frequency says where in the
# runbook a word occurs, not what the runbook is about: "ransomware" and "contain" are in most
# chunks of a ransomware playbook, and the best raw BM25 of "How do we contain ransomware?" over
# that playbook alone is 0.9, where the calibration folders give an answerable question 4 to 13.
FEW_DOCUMENTS = 3


def small_corpus(cosines: list[float]) -> bool:
    """Too few vector candidates for the corpus statistics (margin, BM25) to mean anything."""
    return len(cosines) <= MARGIN_FROM


def graded_bm25(bm25: float, cosines: list[float], documents: int, share: float | None) -> float:
    """The raw BM25 the grade reads. Over too few passages it is unknown (``BM25_PRIOR``).
    Over a folder of fewer than ``FEW_DOCUMENTS`` runbooks (``documents``; 0: not counted) a
    question whose content terms the top passages hold (``share``: their coverage, or across
    languages that of the translations) scores low only because those terms are everywhere in
    the runbook: it is graded as at least ``BM25_PRIOR`` times the share squared. A question
    about what the runbook does not hold keeps its raw score (over one AWS playbook alone, two
    folders, no answer or refusal of the AWS set's questions changes)."""
    if small_corpus(cosines):
        return BM25_PRIOR
    if 0 < documents < FEW_DOCUMENTS and share:
        return max(bm25, BM25_PRIOR * share * share)
    return bm25


def cosine_margin(cosines: list[float]) -> float:
    """How far the best passage stands out of the corpus: its cosine minus the mean cosine of
    the vector candidates ranked 5 to 20. Raw cosines shift with the language pair and the
    corpus; the margin is measured against the corpus (``MARGIN_PRIOR`` in a small corpus)."""
    if small_corpus(cosines):
        return MARGIN_PRIOR
    rest = cosines[MARGIN_FROM:MARGIN_TO]
    return max(0.0, cosines[0] - sum(rest) / len(rest))


@dataclass(frozen=True, slots=True)
class EvidenceGrade:
    probability: float
    cosine: float
    coverage: float | None  # None: no top passage shares the question's script
    bm25: float
    translated: float | None = None  # across scripts: coverage of the glossary translations
    margin: float = 0.0
    names: tuple[str, ...] = ()  # the question's own names (``core.text.glossary``)
    missing: tuple[str, ...] = ()  # those in none of the passages (out-of-scope sections aside)
    excluded: tuple[str, ...] = ()  # of the missing, those an out-of-scope section names
    # the kind of quantity the question asks for (a price, a period, a count…) when no passage
    # states one of that kind (``core.text.amounts``)
    quantity_missing: Quantity | None = None
    # the question's names that no runbook of the folder carries (``searcher.absent_names``):
    # "certbot" over runbooks that never mention it is not answered from their TLS section
    absent: tuple[str, ...] = ()

    @property
    def names_found(self) -> bool:
        """Enough of the question's names are in the passages (``glossary.enough_names``)."""
        return enough_names(self.names, self.missing)

    @property
    def sufficient(self) -> bool:
        return (
            self.probability >= EVIDENCE_THRESHOLD
            and self.names_found
            and not self.quantity_missing
            and not self.absent
        )

    @property
    def features(self) -> dict[str, float]:
        return evidence_features(
            self.cosine, self.coverage, self.bm25, self.translated, self.margin
        )

    def as_dict(self) -> dict[str, float | bool]:
        return {
            "probability": round(self.probability, 4),
            "cosine": round(self.cosine, 4),
            "coverage": round(self.coverage or 0.0, 4),
            "bm25": round(self.bm25, 4),
            "cross_language": self.coverage is None,
            "translated_coverage": round(self.translated or 0.0, 4),
            "margin": round(self.margin, 4),
            "names_found": self.names_found,
            "quantity_found": not self.quantity_missing,
            "names_in_folder": not self.absent,
        }


def term_coverage(query_tokens: list[str], passage_tokens: list[tuple[str, ...]]) -> float:
    """Share of distinct query content tokens found in any of the passages."""
    wanted = {t for t in query_tokens if t}
    if not wanted:
        return 0.0
    have: set[str] = set()
    for tokens in passage_tokens:
        have.update(tokens)
    return len(wanted & have) / len(wanted)


def evidence_features(
    cosine: float,
    coverage: float | None,
    bm25: float,
    translated: float | None = None,
    margin: float = 0.0,
) -> dict[str, float]:
    """The model's inputs (``EVIDENCE_FEATURES``); ``coverage`` None means across scripts, where
    ``translated`` (None: the question has no glossary term) stands in for it."""
    cross = coverage is None
    return {
        "cosine": cosine,
        "coverage": 0.0 if cross else coverage,
        "bm25": math.log1p(max(0.0, bm25)),
        "cross": 1.0 if cross else 0.0,
        "cross_cosine": cosine if cross else 0.0,
        "cross_coverage": (translated or 0.0) if cross else 0.0,
        "margin": margin,
    }


def grade_evidence(
    cosine: float,
    coverage: float | None,
    bm25: float,
    translated: float | None = None,
    margin: float = 0.0,
) -> EvidenceGrade:
    w = EVIDENCE_WEIGHTS
    f = evidence_features(cosine, coverage, bm25, translated, margin)
    z = w["bias"] + sum(w[name] * f[name] for name in EVIDENCE_FEATURES)
    return EvidenceGrade(1.0 / (1.0 + math.exp(-z)), cosine, coverage, bm25, translated, margin)
