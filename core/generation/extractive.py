"""The extractive answerer: the offline answer mode (no LLM), a real algorithm.

It splits each retrieved passage into units (numbered steps, bullet items, table rows and
sentences; lines indented under an item stay under it), scores every unit against the question
by query-term coverage (of the unit read under its heading path) and embedding similarity (plus
the passage's own retrieval score), favours the units of the kind the question asks for (see
``core.generation.intent``: steps, criteria, contacts, definitions; a 目的 section answers none
of them), and composes an answer from the best units with citation markers:

- when the best unit is a numbered step, the whole numbered list it belongs to is given, in
  its original order (operators need every step, not the single best sentence); the same for
  a bullet list introduced by a lead sentence (「次のいずれかに当てはまる場合…」 and its items)
  or one of at most ``SHORT_LIST`` items;
- otherwise the best sentences are given in document order;
- nested items are given nested, with their indentation under the item;
- up to two strong units of the kind asked for from other passages follow as 補足; one from
  another document only when it answers the question too (enough of the question's subject
  terms, or close in meaning).

Every unit carries the marker of the passage it came from (``[1]`` or ``[0]``, as the caller
labels them), so every claim in the answer is traceable to its source.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from core.generation.intent import (
    DEFINITION,
    PURPOSE,
    REFERENCES,
    content_kinds,
    content_terms,
    document_key,
    question_intents,
    section_kind,
)
from core.generation.sentences import sentence_ends
from core.generation.support import passage_vectors
from core.schemas.answer import source_lead
from core.schemas.documents import CELL_SEPARATOR
from core.text.english import is_plain_word, same_stem_in
from core.text.script import dominant_script
from core.text.windows import content_units, window_spans

STEP_RE = re.compile(
    r"^\s*(?:(\d{1,2})[.．)）]\s*|\((\d{1,2})\)\s*|([①-⑳])\s*|手順\s*(\d{1,2})\s*[:：]\s*)"
)
SENTENCE_RE = re.compile(r"[^。！？!?\n]+[。！？!?]*")
BULLET_RE = re.compile(r"^\s*[-*・•]\s+")
TABLE_RULE_RE = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")
MAX_STEPS = 12
MAX_CHILDREN = 12  # nested lines kept under one item
SHORT_LIST = 6  # a bullet list this short is given whole, like a numbered list
LEAD_WORDS = ("次の", "以下の")
# A unit (a sentence, an item, a row) is quoted up to this many content units
# (``core.text.windows``: 300 Japanese characters, about 600 English ones), cut where a chunk
# would be (never inside a word) and marked with …
MAX_UNIT_UNITS = 300
# Units whose embedding similarity is computed (the best by their words): sentences, not whole
# English paragraphs, so a passage's sentences must not take every place from a list's steps.
EMBEDDED_UNITS = 12
# In a passage written in both languages, a line in the question's language is preferred to the
# best line when it scores at least this share of it.
ASKED_LANGUAGE_SHARE = 0.8
# The kind of answer the question asks for, found in the heading path or in the unit's text.
SECTION_BONUS = 0.2
CONTENT_BONUS = 0.1
PURPOSE_PENALTY = 0.15  # a 目的/適用範囲 section, when the question asks for something else
# A list of other documents (a 関連手順 section, a navigation chunk) names what answers, it does
# not answer: unless the question asks for related documents, its lines weigh this much less.
REFERENCES_PENALTY = 0.3
# A line that asks instead of telling (a tabletop exercise's questions, a FAQ's question, a
# checklist of things to ask) shares the question's words and answers nothing.
QUESTION_PENALTY = 0.2
# The answer leads with a passage whose retrieval score is at least this share of the best
# passage's: the kind of section the question asks for reorders close candidates, it does not
# overrule a search that is sure (a "Crisis Handling Steps" list at 0.44 does not lead over the
# "Crisis Declaration" section at 1.0 because the question says "how do we").
LEAD_SCORE_SHARE = 0.6
# A passage first by both keywords and meaning (its fused score at least this) decides the
# language the answer quotes: a line's term coverage in the other script is measured against
# the question's translations, not its words, and the two do not compare (an English question
# over a Japanese admin guide full of English UI labels matched them "fully").
SURE_SCRIPT_SCORE = 0.95
# ends with a question mark, maybe followed by a reference: "…contain the incident? (Section 3.3.1)"
_ASKS = re.compile(r"[?？]\s*(?:[(（][^()（）]{0,40}[)）])?\s*$")
# 補足 from another document must answer the question too: this share of its terms, or this
# embedding similarity with it.
SUPPLEMENT_COVERAGE = 0.5
SUPPLEMENT_SIMILARITY = 0.86


@dataclass(frozen=True, slots=True)
class Evidence:
    label: str  # the marker inside the brackets: "1" for [1]
    text: str  # passage body
    heading: str  # heading path or title, for the lead line
    score: float = 1.0  # retrieval score in [0, 1]
    document: str = ""  # the document it comes from; else the first element of the heading path
    navigation: bool = False  # a list of links to other pages (``Chunk.navigation``)
    # written in another script than the question (``core.text.script``): its lines are
    # matched against the question's terms translated (``extractive_answer(translated=…)``)
    other_script: bool = False
    opens_in_code: bool = False  # the passage starts inside a code block (``Chunk.opens_in_code``)


@dataclass(slots=True)
class Unit:
    evidence: int  # index into the evidence list
    position: int  # order inside the passage
    text: str
    kind: str  # "step" | "bullet" | "row" | "lead" | "sentence"
    list_id: int  # items of one list (or rows of one table) share an id; sentences get -1
    score: float = 0.0
    # nested lines under a list item: (indentation relative to the item, text), in order
    children: list[tuple[int, str]] = field(default_factory=list)
    similarity: float | None = None  # cosine with the question, when it was computed
    context_gain: float = 0.0  # the part of the score owed to the heading path, not the text
    matches_intent: bool = False  # its section or its text is the kind the question asks for

    @property
    def full_text(self) -> str:
        """The item with its nested lines, for scoring."""
        return " ".join([self.text, *(c for _, c in self.children)])


@dataclass(slots=True)
class ExtractiveAnswer:
    text: str
    used_labels: list[str] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)
    intent: str | None = None  # the kind of answer the question asked for


def _introduces_list(sentence: str) -> bool:
    return sentence.rstrip().endswith((":", "：")) or any(w in sentence for w in LEAD_WORDS)


# a table's caption on the line before it: "Table 3-1. Common Sources …", 「表2 連絡先一覧」
_CAPTION = re.compile(
    r"^(?:[Tt]able|TABLE|[Tt]ab\.|表)\s*(?:\d+|[A-Z](?=[-.:：\s\d]))(?:[-.]\d+)*[.:：]?\s"
)


def _indent(line: str) -> int:
    head = line[: len(line) - len(line.lstrip())]
    return len(head.replace("\t", "    ").replace("\u3000", "  "))


def _table_cells(line: str) -> str:
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    return " | ".join(c for c in cells if c)


def _read_table_rows(lines: list[str]) -> set[int]:
    """Indices of the lines that are rows of a table as the document readers write one (cells
    joined by " | ", no leading pipe): two or more such lines in a row with the same number of
    cells. A lone line with a pipe (``Get-ADUser x | Select-Object y``) is not a table."""
    counts = [
        len(line.split(CELL_SEPARATOR))
        if CELL_SEPARATOR in line and not line.strip().startswith("|")
        else 0
        for line in lines
    ]
    return {
        i
        for i, n in enumerate(counts)
        if n >= 2
        and ((i > 0 and counts[i - 1] == n) or (i + 1 < len(counts) and counts[i + 1] == n))
    }


def clip(text: str) -> str:
    """``text``, or its first ``MAX_UNIT_UNITS`` content units cut at a boundary, then …"""
    if content_units(text) <= MAX_UNIT_UNITS:
        return text
    end = window_spans(text, 0, len(text), MAX_UNIT_UNITS - 1, 0)[0][1]
    return text[:end].rstrip() + "…"


def split_units(text: str, evidence: int = 0, opens_in_code: bool = False) -> list[Unit]:
    """Numbered steps, bullet items and table rows (one per line) and sentences (Japanese and
    English: ``_sentences``), in order.

    Consecutive steps share a ``list_id``, and so do consecutive bullet items and the rows of
    a table, in Markdown pipes or as the readers write it (its header row, or its first row, is
    the table's ``lead``); a sentence just before a bullet list that
    introduces it (「次のいずれか…」, 「以下の…」, a trailing colon) becomes the list's
    ``lead`` and shares its id. Lines indented under an item (sub-items, continuation lines,
    commands) are kept as the item's ``children`` with their relative indentation, so a nested
    list stays nested; any bullet under a numbered step is its sub-item. ``opens_in_code``: the
    text starts inside a code block, whose closing fence comes first.
    """
    units: list[Unit] = []
    list_id = -1
    next_list = 0
    in_list = False  # inside a numbered list
    in_bullets = False  # inside a bullet list
    in_table = False
    item_indent = 0  # indentation of the current list item

    def new_list() -> int:
        nonlocal list_id, next_list
        list_id, next_list = next_list, next_list + 1
        return list_id

    def new_list_led(table: bool = False) -> None:
        """A new list (of bullets, of a code block's lines, of a table's rows) that the sentence
        just before it leads when it introduces it (「次のいずれか…」, 「…スクリプト:」, a
        table's caption)."""
        new_list()
        lead = units[-1] if units else None
        if (
            lead
            and lead.kind == "sentence"
            and lead.list_id < 0
            and (_introduces_list(lead.text) or (table and _CAPTION.match(lead.text)))
        ):
            lead.kind, lead.list_id = "lead", list_id

    def add_child(line: str, stripped: str) -> None:
        item = units[-1]
        if len(item.children) < MAX_CHILDREN:
            rel = max(_indent(line) - item_indent, 1)
            item.children.append((rel, clip(stripped)))

    lines = text.splitlines()
    read_rows = _read_table_rows(lines)
    in_code = opens_in_code  # inside a code block that is no list item's
    if in_code:
        new_list()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        indent = _indent(line)
        nested = (in_list or in_bullets) and units and indent > item_indent
        if not nested and (in_code or _FENCE.match(stripped)):
            # a line of a code block is quoted as code (a shell comment is no heading); the
            # fences themselves are no line to quote
            if _FENCE.match(stripped):
                in_code = not in_code
                if in_code:
                    new_list_led()  # the lines of one block are given together, as a list's
            else:
                units.append(Unit(evidence, len(units), clip(stripped), "code", list_id))
            in_list = in_bullets = in_table = False
            continue
        if STEP_RE.match(stripped) and not nested:
            in_bullets = in_table = False
            if not in_list:
                new_list()
                in_list = True
            item_indent = indent
            units.append(Unit(evidence, len(units), clip(stripped), "step", list_id))
            continue
        if nested or (in_list and BULLET_RE.match(line)):
            # a sub-item, an indented continuation or a command under the current item
            add_child(line, stripped)
            continue
        in_list = False
        if stripped.startswith("|") and stripped.count("|") >= 2:
            in_bullets = False
            if TABLE_RULE_RE.match(stripped):
                if in_table and units and units[-1].kind == "row":
                    units[-1].kind = "lead"  # the row above the rule is the header
                continue
            row = _table_cells(stripped)
            if not row:
                continue
            if not in_table:
                new_list_led(table=True)
                in_table = True
            units.append(Unit(evidence, len(units), clip(row), "row", list_id))
            continue
        if i in read_rows:  # a table as the readers write it: cells joined by " | "
            in_bullets = False
            kind = "row"
            if not in_table:
                new_list_led(table=True)
                in_table = True
                kind = "lead"  # a table's first row is its header
            units.append(Unit(evidence, len(units), clip(stripped), kind, list_id))
            continue
        in_table = False
        if BULLET_RE.match(stripped):
            item = BULLET_RE.sub("", stripped).strip()
            if len(item) < 4:
                continue
            if not in_bullets:
                new_list_led()
                in_bullets = True
            item_indent = indent
            units.append(Unit(evidence, len(units), clip(item), "bullet", list_id))
            continue
        in_bullets = False
        for sentence in _sentences(stripped):
            if len(sentence) >= 4:
                units.append(Unit(evidence, len(units), clip(sentence), "sentence", -1))
    return units


def _sentences(line: str) -> list[str]:
    """The sentences of a line of prose: cut after 。！？ and the English . ! ? that end a
    sentence (``sentence_ends``), so that a paragraph of English (a PDF's line) is quoted by
    the sentences that answer, as Japanese is, not whole up to a clip."""
    out: list[str] = []
    for piece in SENTENCE_RE.findall(line):
        start = 0
        for end in sentence_ends(piece):
            if sentence := piece[start:end].strip():
                out.append(sentence)
            start = end
    return out


def term_coverage(text: str, terms: Sequence[str]) -> float:
    """Share of the query terms (weighted by length, capped at 6) that occur in ``text``.

    A plain English word occurs when a word of ``text`` has its stem (``isolate`` occurs in
    "isolating the host"); any other term when it is a substring (case-insensitive).
    """
    lowered = text.lower()
    words = same_stem_in(text, terms)
    total = sum(min(len(t), 6) for t in terms)
    hit = sum(
        min(len(t), 6) for t in terms if (t in words if is_plain_word(t) else t.lower() in lowered)
    )
    return hit / total if total else 0.0


UnitKey = tuple[int, int]  # (evidence, position)


@dataclass(frozen=True, slots=True)
class _Languages:
    """The question's script and each unit's (``core.text.script``), read once per answer."""

    asked: str
    scripts: dict[UnitKey, str]
    units: dict[UnitKey, Unit]

    @classmethod
    def of(cls, question: str, units: Sequence[Unit]) -> _Languages:
        by_key = {(u.evidence, u.position): u for u in units}
        scripts = {key: dominant_script(u.full_text) for key, u in by_key.items()}
        return cls(dominant_script(question), scripts, by_key)

    def script(self, u: Unit) -> str:
        return self.scripts[u.evidence, u.position]

    def translated_line(self, u: Unit) -> bool:
        """A sentence in the other script than the question's next to a sentence in its
        script: a passage translated line by line. Only prose counts (``_prose``): a command, a
        path or an error code in a Japanese runbook is no translation."""
        if u.kind != "sentence" or self.asked == "none":
            return False
        script = self.script(u)
        if script in (self.asked, "none") or not _prose(u.text, script):
            return False
        for step in (-1, 1):
            v = self.units.get((u.evidence, u.position + step))
            if v is not None and v.kind == "sentence" and self.script(v) == self.asked:
                return True
        return False


def _unit_terms(
    units: list[Unit],
    languages: _Languages,
    terms: Sequence[str],
    translated: Sequence[str],
    per_evidence: Sequence[Sequence[str]],
) -> dict[UnitKey, Sequence[str]]:
    """The terms each unit is matched against: the question's own for a sentence of prose in
    its script, their translations for one in the other script, so that a passage written in
    both languages (a translation set line by line under the original) is read in the asker's
    language where it has it. A line that is no prose (``_prose``: a command, a path, a
    number) is matched as its passage is."""
    asked = languages.asked
    out: dict[UnitKey, Sequence[str]] = {}
    for u in units:
        script = languages.script(u)
        if not translated or asked == "none" or script == "none" or not _prose(u.text, script):
            out[u.evidence, u.position] = per_evidence[u.evidence]
        else:
            out[u.evidence, u.position] = terms if script == asked else list(translated)
    return out


_PROSE_END = re.compile(r"[.!?。！？][\"'”’)）」』]*$")


def _prose(text: str, script: str) -> bool:
    """A sentence of prose: four words (Latin) or eight characters (Japanese) ending a sentence,
    not a command, a path or an error code."""
    text = text.strip()
    long_enough = len(text.split()) >= 4 if script == "latin" else len(text) >= 8
    return long_enough and bool(_PROSE_END.search(text))


def _asked_language_best(units: list[Unit], best: Unit, languages: _Languages) -> Unit:
    """``best``, or the best sentence of its passage in the question's script when ``best`` is
    a translated line (``_Languages.translated_line``) and that one scores nearly as well
    (``ASKED_LANGUAGE_SHARE``): a sentence and its translation answer alike. A list or a table
    is given whole, in whatever language."""
    if not languages.translated_line(best):
        return best
    own = [
        u
        for u in units
        if u.evidence == best.evidence
        and u.kind == "sentence"
        and languages.script(u) == languages.asked
    ]
    alt = max(own, key=lambda u: (u.score, -u.position), default=None)
    return alt if alt is not None and alt.score >= ASKED_LANGUAGE_SHARE * best.score else best


def _score_units(
    units: list[Unit],
    evidence: Sequence[Evidence],
    terms: dict[UnitKey, Sequence[str]],
    query_vector: np.ndarray | None,
    embedder,
) -> None:
    """Score each unit; ``terms[u.evidence, u.position]`` are the terms its line is matched
    against (the question's own, or their translations for a line in the other script)."""
    for u in units:
        wanted = terms[u.evidence, u.position]
        own = term_coverage(u.full_text, wanted)
        # Read in its context: a term in the document's title or the section's heading is
        # said of every line under it (「不審メール」 in the title does not make the 目的
        # sentence a better answer than the steps).
        context = term_coverage(u.full_text + "\n" + evidence[u.evidence].heading, wanted)
        u.context_gain = 0.55 * (context - own)
        u.score = 0.55 * context + 0.2 * evidence[u.evidence].score
    if embedder is None or query_vector is None or not units:
        return
    # Embedding similarity for the most promising units only (the embedder is the cost).
    head = sorted(units, key=lambda u: -u.score)[:EMBEDDED_UNITS]
    vectors = np.stack(passage_vectors(embedder, [u.full_text for u in head]))
    sims = vectors @ np.asarray(query_vector, dtype=np.float32)
    for u, sim in zip(head, sims, strict=True):
        u.similarity = float(sim)
        # E5 cosines live in ~[0.7, 0.9]; stretch that band to [0, 1]
        u.score += 0.25 * float(np.clip((sim - 0.75) / 0.15, 0.0, 1.0))


def _intent_adjust(units: list[Unit], evidence: Sequence[Evidence], intents: list[str]) -> None:
    """Favour units whose section (by its heading) or own text is the kind the question asks for.

    A numbered step in a 手順 section answers "how", a line with a phone number in 連絡先
    answers "who"; a 目的 or 適用範囲 section answers none of them, only "why" or "what". The
    first kind the question names weighs most (「連絡先と初動」: contacts, then steps). Whatever
    the question, a list of other documents (unless it asks for them) and a line that asks a
    question instead of answering one weigh less.
    """
    kinds = [section_kind(ev.heading) for ev in evidence]
    for u in units:
        ev = evidence[u.evidence]
        if REFERENCES not in intents and (kinds[u.evidence] == REFERENCES or ev.navigation):
            u.score -= REFERENCES_PENALTY
        if _ASKS.search(u.text):
            u.score -= QUESTION_PENALTY
        if not intents:
            continue
        section = kinds[u.evidence]
        weight = 1.0 if section == intents[0] else 0.75
        if section in intents:
            u.score += SECTION_BONUS * weight
            u.matches_intent = True
        elif set(intents) & content_kinds(u.full_text, u.kind == "step"):
            u.score += CONTENT_BONUS
            u.matches_intent = True
        if section == PURPOSE and not {PURPOSE, DEFINITION} & set(intents):
            u.score -= PURPOSE_PENALTY


def _with_led_lists(chosen: list[Unit], units: list[Unit]) -> list[Unit]:
    """``chosen`` with the list each chosen lead introduces, whole and in order: 「次の要素を
    含める:」 or "The plan should include the following elements:" is answered by its list, not
    by the one or two items that scored on their own."""
    out: list[Unit] = []
    seen: set[tuple[int, int]] = set()
    for u in chosen:
        group = [u]
        if u.kind == "lead":
            group = [m for m in units if m.evidence == u.evidence and m.list_id == u.list_id][
                : MAX_STEPS + 1
            ]
        for m in group:
            if (m.evidence, m.position) not in seen:
                seen.add((m.evidence, m.position))
                out.append(m)
    return sorted(out, key=lambda m: (m.evidence, m.position))


def _squeezed(text: str) -> str:
    """``text`` without white space, to compare quoted lines across chunks."""
    return "".join(text.split())


def _answers(u: Unit, ev: Evidence, terms: Sequence[str], other_kind: bool) -> bool:
    """Whether a unit of another document answers the question too.

    Read under its heading path, it must hold enough of the question's content terms (its
    subject, not the words that name the kind of answer: 「手順」 is in every runbook), or be
    close to it in meaning. A unit of a second kind the question asks for (「連絡先と初動」:
    the steps answered, the contacts supplement them) needs to share one content term only.
    """
    subject = content_terms(terms) or list(terms)
    coverage = term_coverage(u.full_text + "\n" + ev.heading, subject)
    if coverage >= SUPPLEMENT_COVERAGE or (other_kind and coverage > 0):
        return True
    return u.similarity is not None and u.similarity >= SUPPLEMENT_SIMILARITY


_FENCE = re.compile(r"^\s*(```|~~~)")
# a quoted line that would open a Markdown heading inside the answer's list ("- # comment")
_LEADING_HASH = re.compile(r"^#(?=#*(\s|$))")
_ESCAPED_HASH = r"\\#"


def _code_span(text: str) -> str:
    """``text`` as inline code, fenced by more backticks than it holds in a row."""
    ticks = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _list_break(units: Sequence[Unit]) -> list[str]:
    """A blank line when the quote starts a numbered list at another number than 1: Markdown
    lets only a list that starts at 1 interrupt the lead line, and 「…より [1]: 5. … 6. …」 would
    read as one paragraph."""
    match = STEP_RE.match(units[0].text) if units and units[0].kind == "step" else None
    return [""] if match and match.group(1) and int(match.group(1)) != 1 else []


def _render_all(units: Sequence[Unit], label: str) -> list[str]:
    """The units' lines in order; the bullets a quoted sentence leads sit under it, as the
    items of "… include the following elements:" do in the runbook."""
    leads = {
        (u.evidence, u.list_id) for u in units if u.kind == "lead" and CELL_SEPARATOR not in u.text
    }
    lines: list[str] = []
    for u in units:
        rendered = _render(u, label)
        if u.kind == "bullet" and (u.evidence, u.list_id) in leads:
            rendered = ["  " + line if line else line for line in rendered]
        lines += rendered
    return lines


def _render(u: Unit, label: str) -> list[str]:
    """The item's line, then its nested lines indented under it, each with the marker."""
    if u.kind == "step":
        first = f"{u.text} [{label}]"
        match = STEP_RE.match(u.text)
        width = len(match.group(0)) if match else 3
    elif u.kind == "code":
        first = f"- {_code_span(u.text)} [{label}]"
        width = 2
    else:
        first = f"- {_LEADING_HASH.sub(_ESCAPED_HASH, u.text)} [{label}]"
        width = 2
    lines = [first]
    if u.children:
        base = min(rel for rel, _ in u.children)
        fence = ""  # the indented fence of an open code block
        for rel, text in u.children:
            indent = " " * (width + rel - base)
            if _FENCE.match(text):
                # a fence or a line of code takes no marker: "``` [1]" closes no block, and
                # the rest of the answer would be read as code
                fence = "" if fence else f"{indent}{text.strip()[:3]}"
                lines.append(f"{indent}{text}")
            elif fence:
                lines.append(f"{indent}{text}")
            else:
                lines.append(f"{indent}{text} [{label}]")
        if fence and _FENCE.match(lines[-1]):  # the quote ends on an opening fence: drop it
            lines.pop()
        elif fence:  # the quote ends inside the block: close it
            lines.append(fence)
    return lines


def extractive_answer(
    question: str,
    evidence: Sequence[Evidence],
    terms: Sequence[str],
    embedder=None,
    query_vector: np.ndarray | None = None,
    max_sentences: int = 4,
    translated: Sequence[str] = (),
) -> ExtractiveAnswer:
    """Compose an answer from the evidence; ``terms`` are the query's content terms and
    ``translated`` their translations (and the names it carries unchanged), which the lines
    of a passage in the other script are matched against: a Japanese question's words never
    occur in an English passage, and its lines would lose to any Japanese line."""
    per_evidence = [list(translated) if e.other_script and translated else terms for e in evidence]
    intents = question_intents(question)
    intent = intents[0] if intents else None
    units = [u for i, ev in enumerate(evidence) for u in split_units(ev.text, i, ev.opens_in_code)]
    if not units:
        return ExtractiveAnswer(text="", intent=intent)
    if embedder is not None and query_vector is None:
        query_vector = embedder.embed_query_vector(question)
    languages = _Languages.of(question, units)
    wanted = _unit_terms(units, languages, terms, translated, per_evidence)
    _score_units(units, evidence, wanted, query_vector, embedder)
    _intent_adjust(units, evidence, intents)

    def doc(e: Evidence) -> str:
        return e.document or document_key(e.heading)

    sure = max(evidence, key=lambda e: e.score)
    top_score = sure.score
    leaders = [u for u in units if evidence[u.evidence].score >= LEAD_SCORE_SHARE * top_score]
    if top_score >= SURE_SCRIPT_SCORE:
        # its script, or its document (a JSON sample under a Japanese heading is no English)
        leaders = [
            u
            for u in leaders
            if evidence[u.evidence].other_script == sure.other_script
            or doc(evidence[u.evidence]) == doc(sure)
        ]
    best = max(leaders or units, key=lambda u: (u.score, -u.evidence, -u.position))
    best = _asked_language_best(units, best, languages)

    chosen: list[Unit]
    members = [u for u in units if u.evidence == best.evidence and u.list_id == best.list_id]
    has_lead = any(u.kind == "lead" for u in members)
    if best.kind in ("step", "code") or (
        best.kind in ("bullet", "row", "lead") and (has_lead or len(members) <= SHORT_LIST)
    ):
        chosen = members[: MAX_STEPS + 1]
    else:
        # inside the passage the heading says the same of every line: rank by the text
        def own(u: Unit) -> float:
            return u.score - u.context_gain

        same = [u for u in units if u.evidence == best.evidence and own(u) >= 0.6 * own(best)]
        # of the lines of a passage translated line by line, the asker's say the same
        same = [u for u in same if u is best or not languages.translated_line(u)]
        chosen = sorted(
            sorted(same, key=lambda u: -own(u))[:max_sentences], key=lambda u: u.position
        )
        chosen = _with_led_lists(chosen, units)

    taken = {(u.evidence, u.position) for u in chosen}
    # what the answer quotes already: the next chunk of a section repeats its overlap
    quoted = "\n".join(_squeezed(u.full_text) for u in chosen)

    best_doc = doc(evidence[best.evidence])
    kinds = [section_kind(e.heading) for e in evidence]
    # the kinds a question asking for several (「連絡先と初動」) has not got from the chosen section
    given = {kinds[best.evidence]} | content_kinds(best.full_text, best.kind == "step")
    missing = set(intents) - given if len(intents) > 1 else set()
    extras = [
        u
        # ranked by their own text: a heading says the same of every line under it
        for u in sorted(units, key=lambda u: -(u.score - u.context_gain))
        if u.evidence != best.evidence
        and (u.evidence, u.position) not in taken
        and _squeezed(u.full_text) not in quoted
        and u.score >= 0.7 * best.score
        and u.score > 0.2
        # of the kind asked for (no 目的 sentence under a list of steps)
        and (intent is None or u.matches_intent)
        # another document's line (a step above all) only when it answers the question too
        and (
            (best_doc and doc(evidence[u.evidence]) == best_doc)
            or _answers(
                u,
                evidence[u.evidence],
                wanted[u.evidence, u.position],
                kinds[u.evidence] in missing,
            )
        )
    ][:2]

    # A second kind the question asks for (「連絡先と初動」: the steps answered it, the contact
    # procedure is the other half) is given as its own section, its list whole and in order,
    # not as two loose items of 補足.
    second: list[Unit] = []
    top = extras[0] if extras else None
    if top is not None and kinds[top.evidence] in missing and top.kind in ("step", "bullet"):
        second = [u for u in units if u.evidence == top.evidence and u.list_id == top.list_id]
        second = second[: MAX_STEPS + 1]
        extras = [u for u in extras if u.evidence != top.evidence]

    ev = evidence[best.evidence]
    lines = [source_lead(ev.heading, ev.label) if ev.heading else f"[{ev.label}]:"]
    lines += _list_break(chosen)
    lines += _render_all(chosen, ev.label)
    if second:
        other = evidence[second[0].evidence]
        lines.append("")
        lines.append(
            source_lead(other.heading, other.label) if other.heading else f"[{other.label}]:"
        )
        lines += _list_break(second)
        lines += _render_all(second, other.label)
        extras = extras[:1]
    if extras:
        # chosen by score, shown as the passages run: a passage's steps 1 and 2 in that order
        first: dict[int, int] = {}
        for rank, u in enumerate(extras):
            first.setdefault(u.evidence, rank)
        extras.sort(key=lambda u: (first[u.evidence], u.position))
        lines.append("")
        lines.append("補足:")
        for u in extras:
            rendered = _render(u, evidence[u.evidence].label)
            if u.kind == "step":  # out of its list, a step is a bullet of the 補足
                rendered = _render(
                    Unit(u.evidence, u.position, u.text, "bullet", -1, children=u.children),
                    evidence[u.evidence].label,
                )
            lines += rendered
    used = [ev.label] + [
        evidence[u.evidence].label
        for u in second + extras
        if evidence[u.evidence].label != ev.label
    ]
    return ExtractiveAnswer(
        text="\n".join(lines),
        used_labels=list(dict.fromkeys(used)),
        units=chosen + second + extras,
        intent=intent,
    )
