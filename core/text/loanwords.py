"""Loanwords: English words and their katakana spellings, matched by sound.

Japanese technical writing spells most English terms of the trade in katakana (レプリカ, フェイル
オーバー, アプライアンス, メモリ, タイムスタンプ). A glossary cannot list them all, but the two
spellings share their consonants: ``key("replica") == key("レプリカ") == "rprk"``. The key is a
consonant skeleton of the word as katakana would render it:

- katakana is romanized (Hepburn, with the digraphs of loanwords: ティ, ファ, ウォ, ヴ …); the
  long-vowel mark and the small ッ add no consonant, ン is ``n`` (``m`` before p, b, m);
- English spelling is brought near to that: a silent final ``e`` and an ``r`` that closes a
  syllable are dropped (server → サーバー), and so are a plural s and a w that ends a vowel
  (window → ウィンドウ); ``ph`` is f, ``c`` is s before e/i/y and k otherwise, ``x`` is ks,
  ``-tion`` is shon, ``-sion`` jon (version → バージョン), doubled consonants are one;
- on both sides l is r, v is b, z is s, j is g, ``sh``/``th`` are s, ``ch``/``ts`` are t, ``n``
  is m before p, b, m; y and an h after a consonant are dropped, and so are the vowels, but
  whether the word opens on one is kept (``addition`` is not デザイン).

Consonants alone confuse "break" with ブロック: ``vowels_agree`` also asks that katakana write the
English word's first vowel the way it usually does ("data" データ, "server" サーバー).

The key is coarse on purpose: it is looked up only among the words that occur in the runbooks
(``LoanwordIndex``), where three or more consonants rarely collide. Words whose key is shorter
than ``MIN_KEY`` consonants are left to the glossary (``core.text.glossary``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from core.text.english import STOP_WORDS, is_stop_word

MIN_KEY = 3
MIN_ENGLISH = 4  # letters
MIN_KATAKANA = 3  # characters
# How far a key's counterparts may spread: a key that a dozen corpus words share is noise.
MAX_COUNTERPARTS = 4

_KATAKANA_RUN = re.compile(rf"[ァ-ヴー]{{{MIN_KATAKANA},}}")
_ENGLISH_WORD = re.compile(rf"(?<![A-Za-z0-9_-])[A-Za-z]{{{MIN_ENGLISH},}}(?![A-Za-z0-9_])")

_DIGRAPHS = {
    "キャ": "kya", "キュ": "kyu", "キョ": "kyo", "ギャ": "gya", "ギュ": "gyu", "ギョ": "gyo",
    "シャ": "sha", "シュ": "shu", "ショ": "sho", "シェ": "she", "ジャ": "ja", "ジュ": "ju",
    "ジョ": "jo", "ジェ": "je", "チャ": "cha", "チュ": "chu", "チョ": "cho", "チェ": "che",
    "ニャ": "nya", "ニュ": "nyu", "ニョ": "nyo", "ヒャ": "hya", "ヒュ": "hyu", "ヒョ": "hyo",
    "ビャ": "bya", "ビュ": "byu", "ビョ": "byo", "ピャ": "pya", "ピュ": "pyu", "ピョ": "pyo",
    "ミャ": "mya", "ミュ": "myu", "ミョ": "myo", "リャ": "rya", "リュ": "ryu", "リョ": "ryo",
    "ティ": "ti", "ディ": "di", "トゥ": "tu", "ドゥ": "du", "テュ": "tyu", "デュ": "dyu",
    "ファ": "fa", "フィ": "fi", "フェ": "fe", "フォ": "fo", "フュ": "fyu", "ウィ": "wi",
    "ウェ": "we", "ウォ": "wo", "ヴァ": "va", "ヴィ": "vi", "ヴェ": "ve", "ヴォ": "vo",
    "ツァ": "tsa", "ツィ": "tsi", "ツェ": "tse", "ツォ": "tso", "イェ": "ye", "クァ": "kwa",
    "クィ": "kwi", "クェ": "kwe", "クォ": "kwo", "グァ": "gwa",
}  # fmt: skip
_KANA = (
    "アイウエオカキクケコガギグゲゴサシスセソザジズゼゾタチツテトダヂヅデドナニヌネノ"
    "ハヒフヘホバビブベボパピプペポマミムメモヤユヨラリルレロワヲヴァィゥェォャュョヮ"
)
_ROMAJI = (
    "a i u e o ka ki ku ke ko ga gi gu ge go sa shi su se so za ji zu ze zo ta chi tsu te to "
    "da ji zu de do na ni nu ne no ha hi fu he ho ba bi bu be bo pa pi pu pe po ma mi mu me "
    "mo ya yu yo ra ri ru re ro wa o vu a i u e o ya yu yo wa"
)
_MONOGRAPHS = dict(zip(_KANA, _ROMAJI.split(), strict=True))
_VOWELS = set("aeiouy")
_DOUBLE = re.compile(r"([a-z])\1")


def is_katakana(word: str) -> bool:
    return bool(word) and all("ァ" <= ch <= "ヴ" or ch == "ー" for ch in word)


def romanize(katakana: str) -> str:
    """Hepburn romanization of a katakana word (long vowels and ッ leave no letter)."""
    out: list[str] = []
    i = 0
    while i < len(katakana):
        pair = katakana[i : i + 2]
        if pair in _DIGRAPHS:
            out.append(_DIGRAPHS[pair])
            i += 2
            continue
        ch = katakana[i]
        if ch == "ン":
            nxt = katakana[i + 1 : i + 2]
            out.append("m" if nxt and _MONOGRAPHS.get(nxt, "x")[0] in "pbm" else "n")
        elif ch in _MONOGRAPHS:
            out.append(_MONOGRAPHS[ch])
        i += 1  # ー, ッ and anything else add no sound of their own
    return "".join(out)


_EN_RULES = (
    # katakana has no plural: replicas, processes, policies
    (re.compile(r"ies$"), "y"),
    (re.compile(r"(ss|sh|ch|x)es$"), r"\1"),
    (re.compile(r"(?<![su'])s$"), ""),
    (re.compile(r"c(?=[eiy])"), "s"),  # before the silent e goes: service, appliance
    (re.compile(r"([^aeiou])e$"), r"\1"),  # silent final e: service, page
    (re.compile(r"(ss|t)ion"), "shon"),  # session, rotation
    (re.compile(r"sion"), "jon"),  # version バージョン
    (re.compile(r"ti(?=[aou])"), "sh"),  # credential, partial
    (re.compile(r"sch"), "sk"),
    (re.compile(r"tch"), "ch"),
    (re.compile(r"dg"), "g"),
    (re.compile(r"ph"), "f"),
    (re.compile(r"ck"), "k"),
    (re.compile(r"qu"), "kw"),
    # the letter's name before a word of its own: XServer エックスサーバー (not XSOAR)
    (re.compile(r"^x(?=[^aeiouy][a-z]{4})"), "ekkusu"),
    (re.compile(r"x"), "ks"),
    (re.compile(r"c(?!h)"), "k"),
    (re.compile(r"gh"), ""),
    (re.compile(r"^kn"), "n"),
    (re.compile(r"([^aeiou])\1"), r"\1"),  # doubled consonants: ll, ss, pp
    (re.compile(r"(?<=[aeiou])r(?![aeiouy])"), ""),  # non-rhotic: server, board, port
    (re.compile(r"(?<=[aeiou])w(?![aeiou])"), ""),  # a vowel's w: window ウィンドウ
)
_SHARED_RULES = (
    (re.compile(r"n(?=[pbm])"), "m"),  # runbook ランブック
    (re.compile(r"sh|th"), "s"),
    (re.compile(r"ch|ts"), "t"),
    (re.compile(r"(?<=[^aeiouy])h"), ""),
    (re.compile(r"y"), ""),
)
_SOUND = str.maketrans({"l": "r", "v": "b", "z": "s", "j": "g"})


def _spelled_sound(word: str) -> str:
    """The word's sound, spelled as katakana would render it ("" for a word in neither
    script)."""
    word = unicodedata.normalize("NFKC", word)
    if is_katakana(word):
        return romanize(word)
    if not (word.isascii() and word.isalpha()):
        return ""
    sound = word.lower()
    for pattern, replacement in _EN_RULES:
        sound = pattern.sub(replacement, sound)
    return sound


def phonetic_key(word: str) -> str:
    """The consonant skeleton shared by an English word and its katakana spelling ("" for a
    word in neither)."""
    sound = _spelled_sound(word)
    if not sound:
        return ""
    for pattern, replacement in _SHARED_RULES:
        sound = pattern.sub(replacement, sound)
    sound = _DOUBLE.sub(r"\1", sound.translate(_SOUND))  # ン+ナ: channel チャンネル
    if not sound:
        return ""
    # whether the word opens on a vowel stays in the key: "addition" is not デザイン
    opening = "V" if sound[0] in _VOWELS else ""
    return opening + "".join(ch for ch in sound if ch not in _VOWELS)


# The katakana vowels an English spelling's first vowel is written with: "data" データ, "agent"
# エージェント, "call" コール; "server" サーバー; "cluster" クラスター; "team" チーム, "break" ブレーク
# (not ブロック).
_VOWEL_SPELLINGS = {
    "a": "aeo", "e": "eia", "i": "ia", "o": "oau", "u": "auo", "y": "ia",
    "ea": "ie", "ee": "i", "oo": "uo", "ou": "auo", "ai": "ea", "ay": "e", "ei": "ea",
    "ey": "ei", "ie": "ia", "oa": "o", "au": "o", "aw": "o", "ow": "oa", "ew": "u", "ue": "u",
    "ui": "ui", "oi": "o", "oy": "o", "eu": "u",
}  # fmt: skip
_CONSONANT = re.compile(r"sh|ch|th|ts|[^aeiouy]")
_EN_FIRST_VOWEL = re.compile(r"([^aeiouy]*)([aeiouy]+)")
_MORA = re.compile(r"([^aeiou]*)([aeiou])")


def _kana_vowel_after(romaji: str, after: int) -> str:
    """The vowel that follows the ``after``-th consonant of a romanized katakana word (its first
    vowel when ``after`` is 0 and the word opens on one): katakana gives each consonant of a
    cluster a vowel of its own (ブ・ロ・ック for "block"), so the vowel English writes after its
    first consonants is the one after as many consonants in katakana."""
    vowels: list[str | None] = []
    for group, vowel in _MORA.findall(romaji.replace("y", "")):
        units = _CONSONANT.findall(group)
        if not units and not vowels and after == 0:
            return vowel
        vowels += [None] * (len(units) - 1) + [vowel]
    rest = [v for v in vowels[max(0, after - 1) :] if v]
    return rest[0] if after and rest else ""


def vowels_agree(english: str, katakana: str) -> bool:
    """Whether the katakana word writes the English word's first vowel as katakana does
    (``phonetic_key`` compares consonants only: "break" and ブロック share ``brk``)."""
    en, ja = _spelled_sound(english), _spelled_sound(katakana)
    match = _EN_FIRST_VOWEL.match(en)
    if not match or not ja:
        return False
    cluster = len(_CONSONANT.findall(match.group(1)))
    written = match.group(2)[:2]
    allowed = _VOWEL_SPELLINGS.get(written, _VOWEL_SPELLINGS.get(written[:1], ""))
    return _kana_vowel_after(ja, cluster) in allowed


def katakana_words(text: str) -> list[str]:
    """The katakana words of ``text`` (NFKC), split at ・, three characters or more."""
    return _KATAKANA_RUN.findall(unicodedata.normalize("NFKC", text))


def english_words(text: str) -> list[str]:
    """The plain English words of ``text``, lower-cased: letters only, four or more, not a stop
    word (identifiers with digits or dashes are names, not loanwords)."""
    return [
        w.lower()
        for w in _ENGLISH_WORD.findall(unicodedata.normalize("NFKC", text))
        if not is_stop_word(w.lower())
    ]


class LoanwordIndex:
    """The katakana and the English words of a corpus by phonetic key, to find a question
    word's spelling in the other script among the words the runbooks use."""

    def __init__(self, texts: Iterable[str]) -> None:
        katakana: set[str] = set()
        english: set[str] = set()
        for text in texts:  # stored text is NFKC already; each distinct word is keyed once
            katakana.update(_KATAKANA_RUN.findall(text))
            english.update(_ENGLISH_WORD.findall(text))
        self._katakana = _by_key(katakana)
        self._english = _by_key({w.lower() for w in english} - STOP_WORDS)

    def __len__(self) -> int:
        return sum(map(len, self._katakana.values())) + sum(map(len, self._english.values()))

    def counterparts(self, text: str) -> dict[str, list[str]]:
        """For each word of ``text`` (its katakana words and its English words) that has a
        spelling in the other script among the corpus words: those spellings."""
        out: dict[str, list[str]] = {}
        for words, other in (
            (katakana_words(text), self._english),
            (english_words(text), self._katakana),
        ):
            for word in dict.fromkeys(words):
                found = [
                    spelling
                    for spelling in other.get(phonetic_key(word), [])
                    if vowels_agree(*((word, spelling) if word.isascii() else (spelling, word)))
                ]
                if found:
                    out[word] = found
        return out


def _by_key(words: set[str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for word in words:
        key = phonetic_key(word)
        if len(key) >= MIN_KEY:
            grouped.setdefault(key, []).append(word)
    return {k: sorted(v) for k, v in grouped.items() if len(v) <= MAX_COUNTERPARTS}
