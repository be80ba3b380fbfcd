"""What kind of answer a question asks for, and what kind of content a passage unit holds.

Cheap patterns in Japanese and English, no model:

- ``question_intent``: ``steps`` (手順, どうすれば, 方法, "how do I"), ``criteria`` (基準, 条件,
  いつ, "when"), ``contacts`` (連絡先, 誰に, "who"), ``definition`` (とは, "what is"),
  ``purpose`` (目的, なぜ, "why"), or ``None`` for anything else. A bare symptom (「VPN に接続
  できない」, "cannot log in") asks what to do, so it is ``steps``.
- ``section_kind``: the same kinds read from a heading path (見出し such as 手順, 対応手順, 初動,
  判断基準, 連絡先; English Steps, Procedure, Contacts), the nearest heading first; the document
  title (the first element of a longer path) is not a section and is not read.
- ``content_kinds``: the kinds a unit's own text shows (a numbered step, a contact line with a
  phone number or an e-mail address, a criterion with a threshold or a condition, a definition).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.schemas.documents import HEADING_SEPARATOR

STEPS, CRITERIA, CONTACTS, DEFINITION, PURPOSE, REFERENCES = (
    "steps",
    "criteria",
    "contacts",
    "definition",
    "purpose",
    "references",
)

_I = re.IGNORECASE

# Question patterns, tried in this order: the specific nouns (連絡先, 基準, とは, 目的) before the
# generic "how", so 「対応の判断基準は」 is criteria and 「連絡手順」 is steps.
_QUESTION: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        REFERENCES,
        re.compile(
            r"関連(?:する)?(?:手順|文書|資料|ドキュメント)|参考(?:資料|文献|情報)|参照先|リンク先"
            r"|\bsee also\b|\brelated (?:runbooks?|procedures?|documents?|docs|pages?)\b"
            r"|\breferences?\b|further reading|additional reading",
            _I,
        ),
    ),
    (
        CONTACTS,
        re.compile(
            r"連絡先|問い合わせ先|問合せ先|窓口|誰に|誰へ|誰が|誰を|だれに|どこに連絡|どこへ連絡"
            r"|報告先|エスカレーション先|電話番号|メールアドレス|内線|担当者は"
            r"|\bwho\b|\bwhom\b|\bcontacts?\b|phone|e-?mail address|\bnotify whom\b"
            r"|escalate to|\bon-?call\b",
            _I,
        ),
    ),
    (
        CRITERIA,
        re.compile(
            r"基準|条件|いつ|どの(?:ような|よう)?(?:場合|とき|時|タイミング)|どんな(?:場合|とき|時)"
            r"|閾値|しきい値|目安|判断|判定|何件|何回|何分|期限|まで(?:に|の)"
            r"|\bwhen\b|criteri|threshold|condition|trigger|deadline|how (?:soon|long|many)",
            _I,
        ),
    ),
    (
        DEFINITION,
        re.compile(
            r"とは|って何|ってなに|の意味|意味は|何を指す|\bwhat (?:is|are) (?:an? |the )?\w+\??$"
            r"|\bwhat does .+ mean\b|\bdefin(?:e|ition)\b|\bmeaning of\b",
            _I,
        ),
    ),
    (
        PURPOSE,
        re.compile(r"目的|なぜ|何のため|適用範囲|対象範囲|\bwhy\b|\bpurpose\b|\bscope\b", _I),
    ),
    (
        STEPS,
        re.compile(
            r"手順|どうすれば|どうやって|どうしたら|どう(?:対応|対処|する)|どのように|方法|やり方"
            r"|対処|対応|対策|初動|何をすれば|何をする|すべきこと|べきか|仕方|流れ|詳しく"
            r"|\bhow (?:do|to|should|can|does|are|is)\b|\bsteps?\b|procedure|\bwhat (?:should|do|to)"
            r"|\bhandle\b|\brespond\b|\bplaybook\b",
            _I,
        ),
    ),
)
# A symptom without a question word asks what to do about it.
_SYMPTOM = re.compile(
    r"できない|できません|されない|されません|失敗|エラー|止まっ|落ち|つながらない|繋がらない"
    r"|届いた|届きました|感染|侵害|漏えい|漏洩|検知|ロックされ|ロックアウト|動かない|開けない"
    r"|can'?t|cannot|unable|fail|not working|down\b|locked out|infected|compromised|detected",
    _I,
)

# A question whether something may be done (「隔離してもいい？」 "is it OK to ping it?") asks
# for advice on that act, not for a procedure, however much of a symptom it names: it is
# answered by the line about that act, not by the nearest numbered list.
_PERMISSION = re.compile(
    r"て(?:も)?(?:いい|よい|良い|大丈夫|構わない|かまわない|問題(?:ない|ありません))"
    r"|\b(?:is it|it's|is that) (?:ok|okay|fine|safe|alright)\b|\bmay (?:we|i)\b",
    _I,
)

_HEADING: dict[str, re.Pattern[str]] = {
    # a list of other documents: 「関連手順」 names procedures, it holds none
    REFERENCES: re.compile(
        r"^(?:\d+(?:\.\d+)*\.?\s*)?(?:関連(?:する)?(?:手順|文書|資料|ドキュメント|リンク|情報|ページ)"
        r"|参考|参照(?:先|資料|文書)|リンク集|see also|related\b|references?\s*$|further reading"
        r"|additional reading|useful (?:resources|links)|external (?:resources|links))",
        _I,
    ),
    CONTACTS: re.compile(
        r"連絡|体制|窓口|担当|問い合わせ|エスカレーション先|報告先|通報"
        r"|contact|escalation (?:path|contacts?|matrix|list)|on-?call|roles?\b|who\b",
        _I,
    ),
    CRITERIA: re.compile(
        r"基準|条件|判断|判定|閾値|しきい値|目安|トリガー|重大度|深刻度|期限"
        r"|criteri|condition|threshold|trigger|severity|when to|deciding|decision",
        _I,
    ),
    DEFINITION: re.compile(r"用語|定義|とは|glossary|definition|terminology|what is", _I),
    PURPOSE: re.compile(
        r"目的|適用範囲|対象範囲|範囲|背景|はじめに|本書について|改訂履歴"
        r"|purpose|scope|introduction|background|about (?:this|the) document|revision",
        _I,
    ),
    STEPS: re.compile(
        r"手順|対応|初動|対処|作業|方法|封じ込め|復旧|措置|流れ|フロー|調査|確認事項|切り分け"
        r"|steps?\b|procedure|response|actions?\b|how to|containment|eradication|recovery"
        r"|remediation|mitigation|investigation|triage|checklist|runbook|playbook",
        _I,
    ),
}
# Headings are read in this order: a heading naming contacts or criteria is that, even when it
# also says 対応 (「対応の判断基準」, 「連絡体制と対応」); a list of related procedures is
# references, not steps (「関連手順」).
_HEADING_ORDER = (REFERENCES, CONTACTS, CRITERIA, DEFINITION, PURPOSE, STEPS)

_CONTACT_LINE = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|内線\s*\d|(?:TEL|Tel|tel|電話|携帯)\s*[:：]?\s*\+?\d"
    r"|\b0\d{1,4}-\d{1,4}-\d{3,4}\b|\+\d{1,3}[ -]\d|\bext\.?\s*\d|\bphone\b|\bslack\b|#[a-z][\w-]+",
    _I,
)
_CRITERION = re.compile(
    r"以上|以下|以内|超え|超過|未満|を超える|場合|とき[はに、]|時は|いずれか"
    r"|\d+\s*(?:件|回|分|時間|日|%|％|台|人|GB|MB)"
    r"|\bif\b|\bwhen\b|\bmore than\b|\bat least\b|\bwithin\b|\bexceeds?\b|[≥≧≦≤]|[<>]=?\s*\d|\bany of\b",
    _I,
)
_DEFINITION = re.compile(
    r"とは|のこと(?:を|で|。)|を指す|を意味|と呼ぶ|\bis (?:an?|the) \w+|\brefers? to\b|\bmeans\b"
    r"|\bis defined as\b",
    _I,
)


# Words that name the kind of answer rather than its subject: 「VPN の対応手順」 is about VPN.
_KIND_WORD = re.compile(
    r"(?:詳細|対応|初動)?(?:手順|対応|対処|対策|方法|やり方|初動|基準|条件|判断|判定|連絡先|窓口"
    r"|目的|定義|意味|流れ)|steps?|procedures?|criteria|conditions?|contacts?|purpose"
    r"|definition|how|when|who|what|why",
    _I,
)


def content_terms(terms: Sequence[str]) -> list[str]:
    """The query terms that name the question's subject, not the kind of answer it wants."""
    return [t for t in terms if not _KIND_WORD.fullmatch(t.strip())]


def question_intents(question: str) -> list[str]:
    """Every kind of answer ``question`` asks for, the most specific first.

    「連絡先と初動」 asks for two: ``["contacts", "steps"]``. A bare symptom asks for steps.
    """
    text = question.strip()
    kinds = [kind for kind, pattern in _QUESTION if pattern.search(text)]
    if not kinds and _SYMPTOM.search(text) and not _PERMISSION.search(text):
        kinds = [STEPS]
    return kinds


def question_intent(question: str) -> str | None:
    """The kind of answer ``question`` asks for first, or ``None`` when it does not say."""
    kinds = question_intents(question)
    return kinds[0] if kinds else None


def heading_parts(heading: str) -> list[str]:
    return [p.strip() for p in heading.split(HEADING_SEPARATOR) if p.strip()]


def section_kind(heading: str) -> str | None:
    """The kind of section a heading path names, read from the nearest heading outwards.

    In a path of two or more headings the first is the document's title and is not read (a
    title such as 「VPNログイン失敗対応手順」 says nothing about the section under it).
    """
    parts = heading_parts(heading)
    if len(parts) > 1:
        parts = parts[1:]
    for part in reversed(parts):
        for kind in _HEADING_ORDER:
            if _HEADING[kind].search(part):
                return kind
    return None


def content_kinds(text: str, is_step: bool = False) -> set[str]:
    """The kinds a unit's own text shows; ``is_step`` for an item of a numbered list."""
    kinds: set[str] = set()
    if is_step:
        kinds.add(STEPS)
    if _CONTACT_LINE.search(text):
        kinds.add(CONTACTS)
    if _CRITERION.search(text):
        kinds.add(CRITERIA)
    if _DEFINITION.search(text):
        kinds.add(DEFINITION)
    return kinds


def document_key(heading: str) -> str:
    """The document a heading path belongs to: its first element (the title)."""
    parts = heading_parts(heading)
    return parts[0] if parts else ""


def shares_kind(intent: str | None, kinds: Sequence[str] | set[str]) -> bool:
    return intent is not None and intent in kinds
