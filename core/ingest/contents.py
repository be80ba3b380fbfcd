"""Tables of contents, as documents type them: a title (目次, Contents, Table of Contents, List of
Figures …) and entries that end in a page number, usually after a dotted leader
(``Preparation ........ 12``, ``概要 …… 3``).

Shared by the PDF and Word readers: the entries repeat the titles the headings already carry
and, indexed, match every question without answering any; the contents' own title, kept as a
heading, would head whatever follows it.
"""

from __future__ import annotations

import re

ROMAN = r"[ivxlcdm]{1,7}"

_TITLE = re.compile(
    r"(?:目\s*次|contents|table\s+of\s+contents|list\s+of\s+(?:tables|figures|exhibits)|"
    r"表目次|図目次)",
    re.IGNORECASE,
)
_LEADER_ENTRY = re.compile(
    r".*\S\s*(?:\.{3,}|…+|‥+|(?:\.\s){3,}|・{3,}|·{3,}|．{3,}|_{3,})\s*\S*\d+\s*"
)
_ENDS_IN_NUMBER = re.compile(rf".*\S\s+(?:\d{{1,4}}|{ROMAN})", re.IGNORECASE)


def is_contents_title(text: str) -> bool:
    """「目次」, "Table of Contents", "List of Figures" (spacing and case aside)."""
    return bool(_TITLE.fullmatch(" ".join(text.split())))


def is_leader_entry(text: str) -> bool:
    """An entry by its dotted leader and page number, wherever it stands."""
    return bool(_LEADER_ENTRY.fullmatch(" ".join(text.split())))


def ends_in_page_number(text: str) -> bool:
    """A line ending in a page number after a blank (an entry, right after a contents title)."""
    return bool(_ENDS_IN_NUMBER.fullmatch(" ".join(text.split())))
