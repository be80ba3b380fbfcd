"""Questions that ask for a quantity, and passages that state one.

A price, a retention period, a review interval or a lockout threshold is a fact a passage states
or does not: "How much does the Business plan cost per user?", 「オンコール手当っていくら支給
されるの？」, "How many days are blocked emails kept in quarantine?", 「何回失敗したらロック
アウトする？」 are answered by a passage with such a quantity in it (¥5,000, 30 days, every
quarter, 10 回), never by one that is merely about the same product or policy. The evidence grade
refuses such a question when none of its passages states a quantity of the kind asked
(``core.guardrails.EvidenceGrade.quantity_missing``), as it does for a name the passages never
mention. The kinds:

- **money** (how much … cost, いくら, 料金はどのくらい): an amount (¥5,000, $49, 3万円) or that
  something is free. "How much access" or "how much time" is not about money.
- **charge** (whether something is charged for: "Is there an extra charge?", "Are we billed
  for it?", 「追加料金がかかりますか」, 「有料ですか」): an amount, that it is free, or what is
  billed or priced (課金, 料金, "billed per GB"). A folder saying nothing about charges cannot
  answer it either way.
- **duration** (how many days, how long … keep, within how many hours, 何日間, 何時間以内,
  どのくらい前): a number, or a, an, few, several, with a unit of time (30 days, 72 hours,
  an hour, 半年, 3か月).
- **frequency** (how often, どのくらいの頻度, 何日おき): a frequency (daily, every quarter, once a
  week, 毎月, 四半期ごと, 年1回) or an interval (every 6 months: a number with a unit of time).
- **count** asked with its counter, so that the answer's number carries it too (how many times /
  attempts, 何回, 何件, 何人, 何台): the number with that counter (10 回, five attempts, twice).
  "How many people should join the call?" is not checked: the answer may say "a handful" or
  name the roles.
- **size** (何GB, what percentage, how much disk space): a number with a unit of size or a
  percentage.
- **limit** (the maximum number of, how many … allowed, 上限, 最大いくつ, 何件まで): a bound with its
  number (up to 100, a maximum of 50, 100 件まで, 最大 20, 上限は 10); of a size ("the maximum
  size of the log"), a size (20 MB). 「最大何MBまで」 asks for a size.
- **rate limit** (the rate limit of an API, レート制限): a limit, or a rate (100 requests per
  minute, 1 分あたり 60 リクエスト).
- **duration of keeping** (how long … kept, 何日分保存, before they are pruned): a period said of
  keeping (retained for 7 days, 保持期間 30 日), in its sentence or table row or under a heading
  about keeping; "the report is due within 24 hours" does not say how long anything is kept.
- **phone** (a number to call: 電話番号は？, 何番に電話, "what's the phone number of"): a phone
  number or an extension (03-1234-5678, +1 555 010 0199, 0120-123-456, 内線 2345). A runbook
  that says "call AWS Support" without the number does not give it.

A question asking for none of these, or for one whose answer need not be a number ("how long
does it take" can be answered "until the host is reimaged"; いつまで by an event), is not
checked.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

Quantity = Literal["money", "charge", "duration", "frequency", "count", "size", "limit", "phone"]

# "pay" but not "pay attention"; the nouns of a price, not "rate" (a rate limit) or "pricing" (a
# plan's features)
_MONEY_WORDS = (
    r"cost|costs|costing|charge|charges|charged|pa(?:y|id|ys)(?!\s+attention)|price|priced|fee|fees"
)
_MONEY_EN = re.compile(
    rf"\bhow much\b(?!\s+(?:attention|time|effort|access)\b)[^?.!]*\b(?:{_MONEY_WORDS})\b"
    r"|\bhow expensive\b"
    rf"|\bwhat (?:does|do|did|will|would)\b[^?.!]*\b(?:cost|charge)\b"
    r"|\bwhat(?: is| are|'s) the (?:[a-z-]+\s+){0,2}(?:price|cost|fee)s?\b",
    re.IGNORECASE,
)
# いくら "how much" (in money: a Japanese question asking how much time says どのくらい), 何円, and
# a price noun asked about with どのくらい; a price noun alone is not enough (「料金アラートが
# 鳴ったときの対応」 is about an alert, 「費用対効果」 about value).
_MONEY_JA = re.compile(
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

# --- numbers and units -----------------------------------------------------------------------
# a contract's or a policy's style writes the figure after the word: "one (1) year",
# "thirty (30) days", "five (5) attempts"
_IN_FIGURES = r"(?:\s*\(\d[\d,.]*\))?"
_EN_NUMBER = (
    r"(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen"
    rf"|twenty|thirty|forty|fifty|sixty|ninety|hundred|a|an|a few|few|several|a couple of){_IN_FIGURES}"
)
_JA_NUMBER = r"(?:\d[\d,.]*|[一二三四五六七八九十百千数]+)"
# a count is said with a number: "a user" or "several attempts" does not say how many
_EN_COUNT_NUMBER = (
    r"(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen"
    rf"|twenty|thirty|forty|fifty|hundred){_IN_FIGURES}"
)
_EN_TIME_UNIT = (
    r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|fortnights?|months?|quarters?"
    r"|years?)"
)
_JA_TIME_UNIT = r"(?:秒|分|時間|営業日|日|週間|週|か月|ヶ月|カ月|ケ月|箇月|ヵ月|年)"
_DURATION = re.compile(
    rf"\b{_EN_NUMBER}(?:[\s-]+(?:business|working|calendar|full))?[\s-]+{_EN_TIME_UNIT}\b"
    # 十分 is "enough", not ten minutes; 「翌月5日」「2024年4月」 are dates
    rf"|(?!十分)(?<![月\d]){_JA_NUMBER}\s?{_JA_TIME_UNIT}(?!\s?\d+\s?月)"
    r"|半日|半年|\b24\s?/\s?7\b|\b\d+\s?(?:h|d|min)\b",
    re.IGNORECASE,
)
_FREQUENCY = re.compile(
    r"\b(?:hourly|daily|nightly|weekly|fortnightly|monthly|quarterly|annually|yearly"
    r"|bi-?annually|semi-?annually|bi-?weekly|bi-?monthly)\b"
    r"|\b(?:every|each|per|once a|twice a|once per|twice per|once every)\s+(?:other\s+)?"
    rf"(?:{_EN_TIME_UNIT}|shift|sprint|release)\b"
    r"|\b(?:once|twice|\d+\s+times)\s+(?:a|per|every)\b"
    r"|毎(?:秒|分|時間?|日|週|月|年|朝|晩|営業日|四半期)|四半期|(?:年|月|週|日)に?\s?\d+\s?(?:回|度)"
    r"|(?:日|週|週間|月|か月|ヶ月|カ月|年|四半期)(?:ごと|毎|おき)|隔週|隔月",
    re.IGNORECASE,
)
_SIZE = re.compile(
    r"\d[\d,.]*\s?(?:[KMGTP]i?B|bytes?|バイト|%|percent|パーセント|割)"
    # a configuration's own way: "10G", "3M", "512Mi"
    r"|(?-i:\b\d+(?:\.\d+)?[KMGT]i?\b)"
    r"|\b(?:half|a quarter|a third)\b|半分",
    re.IGNORECASE,
)
# What is counted: the English nouns and the Japanese counters an answer says the number with.
# A counter without an English noun here is matched in English by any number.
_COUNTED = (
    ("times|attempts|tries|retries|failures", "回|度"),
    ("people|persons|members|staff|users|individuals|engineers|responders", "人|名"),
    (
        "devices|hosts|machines|servers|nodes|instances|computers",
        "台|ノード|インスタンス|サーバー|ホスト",
    ),
    ("characters|chars|letters", "文字"),
    ("digits", "桁"),
    ("generations|versions|copies", "世代"),
    ("requests|connections", "リクエスト|接続"),  # a rate limit: 「1秒あたり何リクエスト」
    ("credits", "クレジット"),  # what a feature consumes: 「1GB あたり何クレジット」
    ("points", "ポイント"),
)

# --- questions -------------------------------------------------------------------------------
_DURATION_EN = re.compile(
    rf"\bhow many (?:(?:more|extra|business|working|calendar)\s+)?{_EN_TIME_UNIT}"
    r"|\bwithin how (?:many|long)\b"
    r"|\bhow long (?:do|does|should|must|can|will|are|is)\b[^?.!]{0,60}"
    r"\b(?:kept|keep|retain(?:ed)?|stored?|held|hold|preserved?|valid|last|expire)\b"
    rf"|\b(?:in|as) {_EN_TIME_UNIT}\s*\??\s*$"
    r"|\bhow far back\b"
    # a period asked by its name: "what's Keycloak's default access token lifespan?"
    r"|\bwhat(?:'s| is| are)\b(?!\s+(?:a|an)\s)[^?.!]{0,60}\b(?:lifespans?|lifetimes?|time-?outs?|ttls?|expiry"
    r"|expiration|validity period)\b",
    re.IGNORECASE,
)
# not どのくらいの時間がかかる: "how long does it take" may be answered by an event
_DURATION_JA = re.compile(
    r"何(?:営業)?日|何時間|何分|何秒|何週|何か月|何ヶ月|何カ月|何ケ月|何ヵ月|何年"
    r"|(?:どの|どれ)くらい(?:の)?(?:期間|前|日数)|(?:どの|どれ)くらい(?:保存|保管|保持|残)"
    r"|(?:有効期間|有効期限|タイムアウト|寿命|保持期間|保存期間|保管期間|猶予期間)(?:の長さ)?"
    r"(?:は|って|が)?(?:どのくらい|どれくらい|どの程度|どれほど)"
)
_FREQUENCY_EN = re.compile(r"\bhow often\b|\bhow frequently\b|\bat what interval", re.IGNORECASE)
# not 「頻度の高いアラート」: the frequency asked for
_FREQUENCY_JA = re.compile(
    r"(?:どの|どれ)くらいの(?:頻度|間隔)|どの程度の頻度|頻度(?:は|って)(?:どのくらい|どれくらい|どの程度|[?？])"
    r"|何(?:日|週間|か月|ヶ月|カ月|年)(?:おき|ごと|に1回|に一回)"
)
_COUNT_EN = re.compile(
    r"\bhow many (?:[a-z-]+\s+){0,3}?(times|attempts|tries|retries|failures|characters|digits"
    r"|generations|versions|copies|requests|connections|credits|points)\b",
    re.IGNORECASE,
)
_COUNT_JA = re.compile(
    r"何(回|度|件|人|名|台|ノード|個|通|文字|桁|世代|リクエスト|接続|クレジット|ポイント)"
)
# the counted noun asked with いくつ/何: 「世代はいくつ保持する？」「回数は何回まで」 want 「7 世代」
_COUNT_NOUN_JA = re.compile(
    r"(世代|回数|件数|人数|台数|桁数|文字数)(?:は|を|って|が)?(?:いくつ|何)"
)
_COUNTER_OF_NOUN = {"世代": "世代", "回数": "回", "件数": "件", "人数": "人", "台数": "台",
                    "桁数": "桁", "文字数": "文字"}  # fmt: skip
# a rate limit is a bound on requests over time ("100 requests per minute"); one asked with its
# counter (「1秒あたり何リクエスト」) is a count
_RATE_LIMIT_Q = re.compile(r"\brate[- ]limit(?:s|ing)?\b|レート制限|レートリミット", re.IGNORECASE)
_LIMIT_Q = re.compile(
    r"\b(?:maximum|max|minimum|min)\.?\s+(?:number|count|amount|size|length)\b"
    r"|\bhow many\b[^?.!]{0,50}\b(?:allowed|permitted|supported|at most|at a time|at once)\b"
    r"|\blimit (?:on|of|for|to) (?:the )?(?:number|count|amount)\b"
    r"|上限(?:数|値)?(?:は|って)?(?:何|いくつ|どのくらい|どれくらい)|最大(?:で)?(?:何|いくつ)|いくつまで"
    r"|何(?:件|個|回|人|台|つ)まで",
    re.IGNORECASE,
)
# a bound on a count, not on a time ("up to 6 months", 「最大 6 か月間」 bound a period)
_NUM = r"\d[\d,]*(?:\.\d+)?"
_NOT_TIME = rf"(?![\d,.]|\s?{_JA_TIME_UNIT}|\s+{_EN_TIME_UNIT}\b)"
_LIMIT = re.compile(
    r"\b(?:up to|a maximum of|maximum of|max(?:imum)?\s*(?:is|of|:)|at most|no more than"
    rf"|limit(?:ed)? (?:of|to|is)|cap(?:ped)? (?:of|at))\s+(?:{_NUM}{_NOT_TIME}|one|two|three"
    r"|four|five|six|seven|eight|nine|ten|twenty|fifty|hundred|a thousand)"
    r"|\d[\d,]*\s+(?:or fewer|or less|at most|maximum)\b"
    rf"|最大(?:で)?\s?{_NUM}{_NOT_TIME}|上限\s?(?:は|が|:)?\s?{_NUM}{_NOT_TIME}"
    r"|\d[\d,]*\s?(?:件|個|回|人|台|文字|つ)?(?:まで|以内|以下)"
    # 「一度に表示される結果は 50 件のみ」, "only 50", "50 results at a time"
    rf"|\d[\d,]*\s?(?:件|個|回|人|台|文字|つ)(?:のみ|だけ)|\bonly\s+{_NUM}{_NOT_TIME}"
    r"|\b\d[\d,]*\s+(?:[a-z-]+\s+){0,2}(?:at a time|at once|per (?:page|request|call|query|search))\b"
    # a rate: "100 requests per minute", 「1 分あたり 60 リクエスト」
    r"|\d[\d,]*\s*(?:requests?|calls?|req|queries)\s*(?:per|/|an?|each|every)\s*"
    r"(?:second|minute|hour|day|sec|min|s|m|h)\b"
    r"|(?:秒|分|時間)(?:あたり|間に|に|ごと)\s*\d[\d,]*\s*(?:回|件|リクエスト)"
    # that there is none answers it too
    r"|\bno (?:limit|maximum)\b|\bunlimited\b|無制限|(?:上限|制限)は(?:ありません|ない)",
    re.IGNORECASE,
)
# a unit of size asked for (何GB, 何％): a size, asked before a limit (「最大何MBまで」)
_SIZE_UNIT_Q = re.compile(r"何\s?(?:GB|MB|TB|KB|バイト|%|パーセント|割)", re.IGNORECASE)
_SIZE_Q = re.compile(
    r"\bwhat percent(?:age)?\b|\bhow (?:much|big|large)\b[^?.!]{0,30}"
    r"\b(?:disk|space|storage|memory|size|capacity|bandwidth)\b"
    r"|(?:容量|サイズ)は(?:どのくらい|どれくらい)",
    re.IGNORECASE,
)
# a limit asked of a size ("the maximum size of the log", 「容量の上限」) is stated as a size
_SIZE_WORD = re.compile(r"\b(?:size|space|storage|capacity|disk)\b|サイズ|容量", re.IGNORECASE)


# whether something is charged for at all ("Is there an extra charge?", 「追加料金がかかりますか」,
# 「有料ですか」): answered by an amount, by "free", or by a passage on what is billed
_CHARGE_Q = re.compile(
    r"\b(?:is|are) there (?:an? |any )?(?:extra |additional |separate )?(?:charges?|costs?|fees?)\b"
    r"|\b(?:extra|additional|separate) (?:charges?|fees?|billing)\b"
    r"|\bdoes (?:it|this|that|[a-z-]+) cost (?:extra|anything|more|money)\b"
    r"|\b(?:are|will|would|do) (?:we|you|i|they) (?:be |get )?(?:charged|billed)\b"
    r"|\bis (?:it|this|that) (?:free|billed|charged)\b"
    r"|(?:料金|費用|課金)(?:は|が)?(?:別途)?(?:かかり|かかる|かかっ|発生)|課金(?:され|対象)"
    r"|有料(?:です|でしょう|なの|か)|無料(?:です|でしょう|なの|で(?:使え|利用))|追加(?:の)?(?:料金|費用|課金)",
    re.IGNORECASE,
)
_CHARGE = re.compile(
    r"\b(?:billed|billing|charged|chargeable|pricing|priced)\b|\bfor free\b|\bis free\b"
    r"|課金|有料|料金|価格",
    re.IGNORECASE,
)


# a number to call asked for, not a phone number talked about (「電話番号を変更したユーザー」)
_PHONE_Q = re.compile(
    r"電話番号(?:は|って|を教え|が知りたい|[?？])|何番に(?:電話|かけ)"
    r"|\b(?:phone|telephone) number (?:of|for|to)\b"
    r"|\bwhat(?:'s| is) the (?:[\w-]+ ){0,4}(?:phone|telephone) number\b"
    r"|\bwhat number (?:do|should|can) (?:i|we) call\b",
    re.IGNORECASE,
)
_PHONE = re.compile(
    r"(?<![\d-])0\d{1,4}-\d{1,4}-\d{3,4}(?![\d-])"  # 03-1234-5678, 0120-123-456
    r"|\+\d{1,3}[\s.-]?\(?\d{1,4}\)?(?:[\s.-]?\d{2,4}){2,4}"  # +81 3 1234 5678
    r"|(?<!\d)\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}(?!\d)"  # (555) 010-0199
    r"|内線\s?\d{2,6}|\bext(?:ension|\.)?\s?\d{2,6}\b",
    re.IGNORECASE,
)


def asked_quantity(question: str) -> Quantity | None:
    """The kind of quantity ``question`` asks for, if it asks for one (see the module)."""
    text = unicodedata.normalize("NFKC", question)
    if _MONEY_EN.search(text) or _MONEY_JA.search(text):
        return "money"
    if _CHARGE_Q.search(text):
        return "charge"
    if _SIZE_UNIT_Q.search(text):  # 「最大何MBまで」 asks for a size, though for the most
        return "size"
    if _LIMIT_Q.search(text):
        return "limit"
    if _FREQUENCY_EN.search(text) or _FREQUENCY_JA.search(text):
        return "frequency"
    if _DURATION_EN.search(text) or _DURATION_JA.search(text):
        return "duration"
    if _COUNT_EN.search(text) or _COUNT_JA.search(text) or _COUNT_NOUN_JA.search(text):
        return "count"
    if _RATE_LIMIT_Q.search(text):
        return "limit"
    if _SIZE_Q.search(text):
        return "size"
    if _PHONE_Q.search(text):
        return "phone"
    return None


def _counted(question: str) -> tuple[str, str]:
    """The English nouns and the Japanese counters of the count ``question`` asks for."""
    ja = _COUNT_JA.search(question)
    noun = _COUNT_NOUN_JA.search(question)
    en = _COUNT_EN.search(question)
    if ja:
        word = ja.group(1)
    elif noun:
        word = _COUNTER_OF_NOUN[noun.group(1)]
    else:
        word = en.group(1).lower() if en else "times"
    return next(
        ((n, c) for n, c in _COUNTED if word in n.split("|") or word in c.split("|")),
        ("", re.escape(word)),
    )


def _count_pattern(question: str, bare_numbers: bool = True) -> re.Pattern[str]:
    """The asked count with its counter, in either language: 「何回」 and "how many attempts"
    want 「3回」, "10 attempts", "five failed sign-in attempts" or "twice". A counter with no
    English noun (件) is matched in English by any number, unless not ``bare_numbers``."""
    nouns, counters = _counted(question)
    if nouns:
        english = rf"\b{_EN_COUNT_NUMBER}(?:[\s-]+[a-z-]+){{0,3}}?[\s-]+(?:{nouns})\b|"
    else:
        english = r"\b\d|" if bare_numbers else ""
    # not the conjunction "Once a suspicious IP is found"
    once = (
        r"|\b(?:only|just|at most|at least|more than|exactly|no more than)\s+once\b|\btwice\b"
        if "回" in counters
        else ""
    )
    # 「3 台」, and the noun counted with つ: 「3 つのデータ・ノード」
    ja = rf"{_JA_NUMBER}\s?(?:(?:つ|個)の[^、。\s\d]{{0,8}}?)?(?:{counters})"
    return re.compile(rf"{english}{ja}{once}", re.IGNORECASE)


# A table row of an option's name, its description and its default ("days | The number of days
# that daily log files should be retained | 7"): the number stands in a cell of its own and the
# unit is said in another cell of the row.
_NUMBER_CELL = re.compile(r"\d[\d,.]*")
_ROW_UNITS = {
    "duration": re.compile(
        rf"\b{_EN_TIME_UNIT}\b|日数|時間数|期間|[（(](?:秒|分|時間|日|週|月|年)[）)]", re.IGNORECASE
    ),
    "size": re.compile(
        r"\b(?:[KMGT]i?B|bytes?|size|percent(?:age)?)\b|容量|サイズ|バイト", re.IGNORECASE
    ),
    "limit": re.compile(r"\b(?:max(?:imum)?|limit|up to|at most)\b|上限|最大", re.IGNORECASE),
}


def _row_states(kind: Quantity, text: str) -> bool:
    """A table row of ``text`` with a cell that is a number and another cell naming the unit
    of ``kind`` (``_ROW_UNITS``)."""
    unit = _ROW_UNITS.get(kind)
    if unit is None:
        return False
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2:
            continue
        # a value follows its name; a number in the first cell numbers the row ("1 | Limit…")
        numbers = [i for i, c in enumerate(cells) if i and _NUMBER_CELL.fullmatch(c)]
        if numbers and any(unit.search(c) for i, c in enumerate(cells) if i not in numbers):
            return True
    return False


# A setting's value under a heading that names what it counts or measures (「パスワードの最低
# 必要文字数」 over 「デフォルト: 4」, "Session timeout (minutes)" over "Default: 30"): the
# number stands alone after its label, and the unit is the heading's.
_LABELLED_VALUE = re.compile(r"^\s*(?:[-*・]\s*)?[^\d\n]{0,24}[:：]\s*\d[\d,.]*\s*$", re.MULTILINE)


def _label_unit(kind: Quantity, question: str) -> re.Pattern[str] | None:
    """What a heading names when the value under it is of ``kind`` (a count: its counter)."""
    if kind != "count":
        return _ROW_UNITS.get(kind)
    nouns, counters = _counted(question)
    return re.compile(
        rf"(?:{counters})数?|\bnumber of\b|\blength\b" + (rf"|\b(?:{nouns})\b" if nouns else ""),
        re.IGNORECASE,
    )


def _labelled_value(unit: re.Pattern[str] | None, text: str) -> bool:
    head = "\n".join(text.splitlines()[:2])
    return bool(unit and unit.search(head) and _LABELLED_VALUE.search(text))


# A question asking how long something is kept (「何日分保存されてる？」, "how long do we keep
# the base backups before they are pruned?") is answered by a period said of keeping: in the
# sentence that states it, or under a heading about it (「バックアップ保持ポリシー」: 「日次: 7日分」).
# A period said of anything else ("the report is due within 24 hours") does not answer it.
_RETENTION_Q = re.compile(
    r"保存|保持|保管|残(?:る|って|す|され)|消え|何日分|"
    r"\b(?:retain(?:ed)?|retention|kept|stored|expired?|pruned|purged)\b|"
    # not "keep an eye on", nor "we keep seeing" (to go on doing)
    r"\bkeep\b(?!\s+(?:a\s+|an\s+)?(?:close\s+)?(?:eye|watch|track|monitoring|watching))"
    r"(?!\s+[a-z]+ing\b)",
    re.IGNORECASE,
)
_RETENTION = re.compile(
    r"保存|保持|保管|残|消え|削除|期限|有効期間|ライフサイクル|"
    r"\b(?:retain|retained|retention|kept|keep|keeps|stor(?:e|ed|age)|expir\w*|prun\w*|purg\w*|"
    r"delet\w*|remov\w*|lifecycle|ttl|archiv\w*)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[。！？!?])|(?<=[.;])\s+|\n")


def _retained_period(text: str) -> bool:
    """A period said of keeping (``_RETENTION``) in ``text``: in one sentence or table row, or
    anywhere under a title or heading (the passage's first two lines) about keeping."""
    if _RETENTION.search("\n".join(text.splitlines()[:2])) and (
        _DURATION.search(text) or _row_states("duration", text)
    ):
        return True
    return any(
        _RETENTION.search(part) and (_DURATION.search(part) or _row_states("duration", part))
        for part in _SENTENCE_END.split(text)
        if part
    )


def states_quantity(kind: Quantity, passages: list[str], question: str = "") -> bool:
    """Whether any of ``passages`` states a quantity of ``kind`` (a count: with the counter
    ``question`` asks for), in a sentence or in a table row (``_row_states``); a period of
    keeping for a question asking how long something is kept (``_RETENTION_Q``)."""
    texts = [unicodedata.normalize("NFKC", p) for p in passages]
    asked = unicodedata.normalize("NFKC", question)
    if kind == "duration" and _RETENTION_Q.search(asked):
        return any(_retained_period(t) for t in texts)
    unit = _label_unit(kind, question)
    if any(_row_states(kind, t) or _labelled_value(unit, t) for t in texts):
        return True
    if kind == "frequency":  # a frequency word, or an interval (every 6 months)
        patterns = [_FREQUENCY, _DURATION]
    elif kind == "count":
        patterns = [_count_pattern(asked)]
    elif kind == "charge":  # an amount, "free", or what is billed
        patterns = [_AMOUNT, _CHARGE]
    elif kind == "limit" and _SIZE_WORD.search(question):  # "20 MB" bounds a size
        patterns = [_LIMIT, _SIZE]
    elif kind == "limit" and _COUNT_JA.search(asked):
        # the bound asked with its counter (「最大何文字」): the number with it answers (「8~50文字」,
        # "50 characters"); a counter with no English noun (件) is no bare number of English text
        patterns = [_LIMIT, _count_pattern(asked, bare_numbers=False)]
    else:
        by_kind = {
            "money": _AMOUNT,
            "duration": _DURATION,
            "size": _SIZE,
            "limit": _LIMIT,
            "phone": _PHONE,
        }
        patterns = [by_kind[kind]]
    return any(p.search(t) for p in patterns for t in texts)


def asks_for_amount(question: str) -> bool:
    """Whether ``question`` asks what something costs or pays (a price, fee or allowance)."""
    return asked_quantity(question) == "money"


def states_amount(passages: list[str]) -> bool:
    """Whether any of ``passages`` states an amount of money (or that something is free)."""
    return states_quantity("money", passages)
