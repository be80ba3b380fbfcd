"""Citation formatting shared by the RAG pipelines: excerpts, escaped highlights, reference lists.

Document text is untrusted: ``highlight_html`` escapes it before adding ``<mark>`` tags, so a
runbook containing ``<script>`` renders as text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Sequence

from core.retrieval.searcher import find_offsets

MARKER_RE = re.compile(r"\[(\d{1,3})\]")  # the canonical form, as answers carry it
# Every form a model writes a marker in: [1], ［9］, 【1】, [1, 9], [1,2], ［1、2］, [0009], [^1].
_DIGITS = "[0-9０-９]{1,4}"
MARKER_FORMS_RE = re.compile(rf"[\[［【]\^?\s*({_DIGITS}(?:\s*[,，、]\s*\^?{_DIGITS})*)\s*[\]］】]")
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def marker_numbers(match: re.Match[str]) -> list[int]:
    """The source numbers one marker names (``[1, 9]`` -> [1, 9], ``［０００９］`` -> [9])."""
    return [int(part.strip().lstrip("^")) for part in re.split(r"[,，、]", match.group(1))]


def _sub_outside_code(
    pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str], text: str
) -> str:
    """``pattern.sub`` everywhere but inside inline code spans (`` `$args[0]` `` stays)."""
    out: list[str] = []
    last = 0
    for code in _CODE_SPAN.finditer(text):
        out.append(pattern.sub(repl, text[last : code.start()]))
        out.append(code.group(0))
        last = code.end()
    out.append(pattern.sub(repl, text[last:]))
    return "".join(out)


def marker_spans(text: str) -> list[tuple[int, int, list[int]]]:
    """(start, end, numbers) of every marker in any form, outside inline code spans."""
    code = [(m.start(), m.end()) for m in _CODE_SPAN.finditer(text)]
    return [
        (m.start(), m.end(), marker_numbers(m))
        for m in MARKER_FORMS_RE.finditer(text)
        if not any(a <= m.start() < b for a, b in code)
    ]


def excerpt(text: str, limit: int = 200) -> str:
    """At most ``limit`` characters, whitespace folded, with … when cut."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def highlight_html(text: str, terms: Sequence[str]) -> str:
    """HTML-escaped ``text`` with the query terms wrapped in ``<mark>``."""
    out: list[str] = []
    last = 0
    for start, end in find_offsets(text, list(terms)):
        out.append(html.escape(text[last:start]))
        out.append(f"<mark>{html.escape(text[start:end])}</mark>")
        last = end
    out.append(html.escape(text[last:]))
    return "".join(out)


def span_html(text: str, start: int, end: int, context: int = 400) -> str:
    """HTML-escaped ``text`` with ``text[start:end]`` wrapped in ``<mark>`` (the span a sentence
    is aligned to), cut to ``context`` characters either side with … where cut."""
    start = max(0, min(start, len(text)))
    end = max(start, min(end, len(text)))
    lo, hi = max(0, start - context), min(len(text), end + context)
    return (
        ("…" if lo else "")
        + html.escape(text[lo:start])
        + f"<mark>{html.escape(text[start:end])}</mark>"
        + html.escape(text[end:hi])
        + ("…" if hi < len(text) else "")
    )


def markers_in(text: str) -> list[str]:
    """Citation markers used in ``text`` in first-use order (``[1]`` -> "1", every form:
    ``［9］`` -> "9", ``[1, 2]`` -> "1", "2", ``[0009]`` -> "9")."""
    return list(dict.fromkeys(str(n) for _, _, numbers in marker_spans(text) for n in numbers))


def renumber_markers(text: str, numbers: Sequence[int]) -> tuple[str, dict[int, int]]:
    """Number the sources an answer cites 1..m in first-use order, and the others after them.

    ``numbers`` are the sources' current numbers; returns the text with its markers rewritten
    and the mapping old -> new for every source (so a citation list can follow the text).
    """
    known = set(numbers)
    used = [int(m) for m in markers_in(text) if int(m) in known]
    order = used + [n for n in numbers if n not in set(used)]
    mapping = {old: new for new, old in enumerate(order, start=1)}

    def repl(m: re.Match[str]) -> str:
        numbers = marker_numbers(m)
        if any(n not in mapping for n in numbers):
            return m.group(0)  # an invented number: left for the sentence check to remove
        return "".join(f"[{mapping[n]}]" for n in numbers)

    return _sub_outside_code(MARKER_FORMS_RE, repl, text), mapping


def normalize_markers(text: str, valid: Iterable[str]) -> tuple[str, list[str]]:
    """Every marker form rewritten as ``[n]`` (a list as ``[1][9]``), numbers that name no given
    source removed; returns (text, removed numbers). Inline code spans are left as written."""
    allowed = {int(v) for v in valid}
    removed: list[str] = []

    def repl(m: re.Match[str]) -> str:
        kept = []
        for n in marker_numbers(m):
            if n in allowed:
                kept.append(f"[{n}]")
            else:
                removed.append(str(n))
        return "".join(dict.fromkeys(kept))

    return _sub_outside_code(MARKER_FORMS_RE, repl, text), list(dict.fromkeys(removed))


def strip_invented_markers(text: str, valid: Iterable[str]) -> tuple[str, list[str]]:
    """Remove markers that point at no given source (any form; the others normalised to
    ``[n]``); returns (text, removed markers)."""
    cleaned, removed = normalize_markers(text, valid)
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned).strip()
    return cleaned, removed


def wiki_reference_line(refs: Sequence[tuple[int, str, int]]) -> str:
    """「参照: [0] jawiki:<title>#chunk=<n>, [1] …」 from (index, title, chunk number)."""
    return "参照: " + ", ".join(f"[{i}] jawiki:{title}#chunk={n}" for i, title, n in refs)
