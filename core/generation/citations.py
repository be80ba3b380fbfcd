"""Citation formatting shared by the RAG pipelines: excerpts, escaped highlights, reference lists.

Document text is untrusted: ``highlight_html`` escapes it before adding ``<mark>`` tags, so a
runbook containing ``<script>`` renders as text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

from core.retrieval.searcher import find_offsets

MARKER_RE = re.compile(r"\[(\d{1,3})\]")


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


def markers_in(text: str) -> list[str]:
    """Citation markers used in ``text`` in first-use order (``[1]`` -> "1")."""
    return list(dict.fromkeys(MARKER_RE.findall(text)))


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
        new = mapping.get(int(m.group(1)))
        return m.group(0) if new is None else f"[{new}]"

    return MARKER_RE.sub(repl, text), mapping


def strip_invented_markers(text: str, valid: Iterable[str]) -> tuple[str, list[str]]:
    """Remove markers that point at no given source; returns (text, removed markers)."""
    allowed = set(valid)
    removed: list[str] = []

    def repl(m: re.Match[str]) -> str:
        if m.group(1) in allowed:
            return m.group(0)
        removed.append(m.group(1))
        return ""

    cleaned = MARKER_RE.sub(repl, text)
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned).strip()
    return cleaned, list(dict.fromkeys(removed))


def wiki_reference_line(refs: Sequence[tuple[int, str, int]]) -> str:
    """「参照: [0] jawiki:<title>#chunk=<n>, [1] …」 from (index, title, chunk number)."""
    return "参照: " + ", ".join(f"[{i}] jawiki:{title}#chunk={n}" for i, title, n in refs)
