"""Japanese (and English) answer patterns: what kind of answer the user gave.

``classify_answer`` tells an empty answer, 「わからない」, an explicit 「特になし」, an abort
command and real content apart; ``is_correction`` and ``choose_side`` read corrections and the
reply to a contradiction check. All functions are total: any string gives an answer.
"""

from __future__ import annotations

import re
from enum import StrEnum

from core.interview.normalizers import normalize


class AnswerKind(StrEnum):
    EMPTY = "empty"
    UNKNOWN = "unknown"  # わからない / 不明 / I don't know / 確認中
    NONE = "none"  # 特になし / ありません: an explicit "nothing"
    ABORT = "abort"  # 終了 / 中止 / stop
    CONTENT = "content"


_ABORT = {"終了", "中止", "中断", "やめる", "やめます", "終わり", "おわり", "終わります"}
_ABORT |= {"/stop", "/quit", "stop", "quit", "exit", "abort", "インタビュー終了"}
_UNKNOWN = re.compile(
    r"わから(?:ない|ん)|分から(?:ない|ん)|わかりません|分かりません|不明|知らない|知りません|"
    r"覚えていない|覚えてない|覚えていません|記憶にない|把握していない|把握していません|"
    r"答えられない|答えられません|見当がつかない|特定できていない|特定できていません|"
    r"後で確認|あとで確認|後ほど確認|確認中|調査中|未定|"
    r"i\s*don'?t\s*know|do\s*not\s*know|not\s*sure|no\s*idea|dunno|idk|unknown|n/?a\b|tbd",
    re.IGNORECASE,
)
_NONE = re.compile(
    r"^(?:[^、。,\s]{1,10}?(?:は|も))?\s*(?:今日は|本日は|今回は|まだ|特に|とくに)?\s*"
    r"(?:なし|無し|ない|ないです|ありません|ございません|なかった|なかったです|"
    r"ありませんでした|いない|いません|不要|特にない|特にありません|特になし|とくになし|"
    r"none|nothing|no(?:\s+\w+)?|nope|not\s+applicable)[。.!！\s]*$",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"[\s、。,.!?！？・…ー~]|すみません|すいません|ごめんなさい|申し訳|ちょっと|今は|今のところ|"
    r"まだ|正直|です|ます|ね|よ|が|は|けど|けれど|sorry|i'?m|really|yet|right now|現時点で",
    re.IGNORECASE,
)


def _content_left(text: str, pattern: re.Pattern[str]) -> int:
    return len(_FILLER.sub("", pattern.sub("", text)))


def classify_answer(text: str | None) -> AnswerKind:
    """The kind of an answer. Short 「わからない」-style answers are UNKNOWN; an answer that
    says 不明 but also carries content (「原因は不明だが設定変更が怪しい」) is CONTENT."""
    s = normalize(text or "").strip()
    if not s or not re.search(r"[0-9A-Za-z\u3040-\u30ff\u3400-\u9fff]", s):
        return AnswerKind.EMPTY
    if s.lower() in _ABORT:
        return AnswerKind.ABORT
    if len(s) <= 30 and _NONE.match(s):
        return AnswerKind.NONE
    if _UNKNOWN.search(s) and _content_left(s, _UNKNOWN) < 6:
        return AnswerKind.UNKNOWN
    return AnswerKind.CONTENT


_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def detect_language(text: str) -> str:
    """``"Japanese"`` or ``"English"`` (the design's two languages)."""
    s = normalize(text)
    ja = len(_JAPANESE.findall(s))
    en = sum(len(w) for w in _LATIN_WORD.findall(s))
    return "English" if en > 2 * ja and en >= 6 else "Japanese"


_CORRECTION = re.compile(
    r"訂正|間違(?:い|え)|誤り|ではなく|じゃなく|でなく|正しくは|実は|実際(?:に)?は|修正します|"
    r"actually|correction|i meant|not\s+\S+\s+but",
    re.IGNORECASE,
)


def is_correction(text: str) -> bool:
    return bool(_CORRECTION.search(normalize(text)))


_OLD_SIDE = re.compile(
    r"前者|最初|先ほど|さっき|以前|前の方|前に言った|元の|the first|earlier|former"
)
_NEW_SIDE = re.compile(r"後者|今回|新しい|後の方|あと(?:の)?方|今の|最新|the second|latter|new one")


def choose_side(text: str) -> str | None:
    """For a contradiction check: ``"old"``, ``"new"`` or ``None`` when the reply names neither."""
    s = normalize(text)
    old, new = bool(_OLD_SIDE.search(s)), bool(_NEW_SIDE.search(s))
    if old and not new:
        return "old"
    if new and not old:
        return "new"
    return None
