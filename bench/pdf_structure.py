"""How well a PDF's structure survives reading and chunking: NIST SP 800-61r2, before and after.

    WB_DATASETS_DIR=../shared/datasets python -m bench.pdf_structure [--pdf PATH]

Reads ``runbooks-dev/pdf/NIST.SP.800-61r2.pdf`` (a 79-page PDF with an outline, a table of
contents, running headers and footers, numbered sections, tables and bullets) twice: with the
reader of ``core.ingest.pdf`` (after) and with the reader main had before it (before: pypdf's
``extract_text`` per page, the old line unwrapping, headings found by the chunker's numbered-line
patterns), and a third time with the new reader told to ignore the outline (fonts: headings
from font size, weight and numbering only). All are chunked as the runbook index does (``chunk_document`` with the Settings'
``runbook_chunk_size`` / ``runbook_chunk_overlap``). Printed for each:

- **right section**: the share of chunks whose heading path names the section their text
  belongs to. The checker does not use the reader: it extracts every page again with pypdf,
  keeps each run's page and baseline ``y``, and folds the text to a key (lower-case letters and
  digits only) so that line breaks, hyphens, bullets and spaces do not matter. A chunk is
  located by the first 40-key-character probe of its body (trying offsets 0, 20, 40, ...) that
  occurs exactly once in the document's key; its position is the probe's (page, y). The section
  it belongs to is the PDF outline entry that starts last at or before that position (entries
  ordered by destination page, then ``/Top`` from the top, then outline order, so the deeper of
  two entries at one place wins). The chunk is right when the last element of its heading path
  folds to that entry's title (or, before the first entry, when its heading path is empty).
  Chunks that cannot be located are counted apart (not right, not wrong).
- **boundary inside a word**: chunks whose first character is a Latin letter preceded by a
  Latin letter in the document text, or whose last character is one followed by one.
- **running header or page number**: chunks containing a running line (a raw line found among
  the first or last three lines of at least 30 % of the pages, case-sensitive) or a line that
  is only a page number (``12``, ``iv``).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from core.schemas.documents import Chunk, Document
from core.settings import Settings
from core.text.chunking import chunk_document
from core.text.normalize import normalize_text

PROBE = 40


def fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", text).lower() if c.isalnum())


# --- the reader main had before core.ingest.pdf (commit 8861373), for the "before" figures ----

_WRAP_MIN_CHARS = 35
_SENTENCE_END = tuple("。．！？!?」』）)")
_ITEM_START = re.compile(r"^\s*(\(\d+\)|\d+(\.\d+)*[.)．]?\s|第\d+|[・\-*•■□◆●]|手順\d+|Sev\d)")


def _legacy_unwrap(text: str) -> str:
    out: list[str] = []
    for line in text.splitlines():
        prev = out[-1] if out else ""
        if (
            prev
            and line.strip()
            and len(prev) >= _WRAP_MIN_CHARS
            and not prev.rstrip().endswith(_SENTENCE_END)
            and not _ITEM_START.match(line)
        ):
            joiner = " " if prev[-1:].isascii() and line[:1].isascii() else ""
            out[-1] = prev.rstrip() + joiner + line.lstrip()
        else:
            out.append(line)
    return "\n".join(out)


def legacy_document(raw_pages: list[str], name: str) -> Document:
    text = "\n\n".join(p.strip() for p in raw_pages if p.strip())
    text = normalize_text(_legacy_unwrap(text))
    return Document(name, name, name, text, "", "", "pdf")


def new_document(path: Path) -> Document:
    from core.ingest.loaders import load_file

    doc, _ = load_file(path, path.parent, 100_000_000)
    return doc


def fonts_only_document(path: Path) -> Document:
    """The reader with the outline ignored: headings from font size, weight and numbering."""
    from core.ingest.pdf import read_pdf

    pdf = read_pdf(path.read_bytes(), path.name, str(path), use_outline=False)
    return Document(path.name, path.name, path.name, pdf.text, "", "", "pdf", pdf.headings)


# --- the independent checker ------------------------------------------------------------------


@dataclass
class PageIndex:
    key: str  # the folded text of every page, in order
    where: list[tuple[int, float]]  # (page, y) of every key character
    raw_pages: list[str]


def page_index(reader) -> PageIndex:
    key: list[str] = []
    where: list[tuple[int, float]] = []
    raw_pages: list[str] = []
    for number, page in enumerate(reader.pages):

        def visit(text, cm, tm, font_dict, font_size, number=number):
            y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
            for char in fold(text):
                key.append(char)
                where.append((number, y))

        raw_pages.append(page.extract_text(visitor_text=visit) or "")
    return PageIndex("".join(key), where, raw_pages)


def outline(reader) -> list[tuple[int, float, int, str]]:
    """(page, -top, order, title) of every outline entry, sorted by position."""
    entries: list[tuple[int, float, int, str]] = []

    def walk(items):
        for item in items:
            if isinstance(item, list):
                walk(item)
                continue
            page = reader.get_destination_page_number(item)
            top = item.get("/Top")
            entries.append(
                (page, -float(top) if top is not None else -1e9, len(entries), item.title)
            )

    walk(reader.outline)
    return sorted(entries)


def locate(chunk: Chunk, index: PageIndex) -> tuple[int, float] | None:
    key = fold(chunk.body)
    for offset in range(0, max(1, len(key) - PROBE + 1), PROBE // 2):
        probe = key[offset : offset + PROBE]
        if len(probe) < 12:
            break
        found = index.key.find(probe)
        if found >= 0 and index.key.find(probe, found + 1) < 0:
            return index.where[found]
    return None


def expected_title(position: tuple[int, float], entries) -> str | None:
    page, y = position
    current = None
    for entry_page, neg_top, _, title in entries:
        if (entry_page, neg_top) <= (page, -y - 2.0):
            current = title
        else:
            break
    return current


def running_lines(raw_pages: list[str]) -> set[str]:
    seen: Counter[str] = Counter()
    for text in raw_pages:
        lines = [" ".join(ln.split()) for ln in text.splitlines() if ln.strip()]
        seen.update(set(lines[:3] + lines[-3:]))
    needed = max(2, 0.3 * len(raw_pages))
    return {ln for ln, n in seen.items() if n >= needed and not re.fullmatch(r"[\divxlc]+", ln)}


_PAGE_NUMBER_LINE = re.compile(r"\d{1,3}|[ivxlc]{1,6}", re.IGNORECASE)


@dataclass
class Figures:
    chunks: int
    located: int
    right: int
    inside_word: int
    running: int
    seconds: float

    def line(self, label: str) -> str:
        share = self.right / self.located if self.located else 0.0
        return (
            f"{label:6s} chunks {self.chunks:4d}  located {self.located:4d}  "
            f"right section {self.right:4d} ({share:6.1%})  "
            f"boundary inside a word {self.inside_word:4d}  "
            f"running header/page number {self.running:4d}  read {self.seconds:5.1f} s"
        )


def measure(doc: Document, settings: Settings, index: PageIndex, entries, seconds) -> Figures:
    chunks = chunk_document(doc, settings.runbook_chunk_size, settings.runbook_chunk_overlap)
    running = running_lines(index.raw_pages)
    text = doc.text
    located = right = inside = with_running = 0

    def latin(ch: str) -> bool:
        return ch.isascii() and ch.isalpha()

    for chunk in chunks:
        position = locate(chunk, index)
        if position is not None:
            located += 1
            title = expected_title(position, entries)
            got = chunk.heading_path[-1] if chunk.heading_path else None
            if (title is None and got is None) or (
                title is not None and got is not None and fold(title) == fold(got)
            ):
                right += 1
        s, e = chunk.start, chunk.end
        if (s > 0 and latin(text[s]) and latin(text[s - 1])) or (
            e < len(text) and latin(text[e - 1]) and latin(text[e])
        ):
            inside += 1
        lines = [" ".join(ln.split()) for ln in chunk.body.splitlines()]
        if any(r in chunk.body for r in running) or any(
            _PAGE_NUMBER_LINE.fullmatch(ln) for ln in lines
        ):
            with_running += 1
    return Figures(len(chunks), located, right, inside, with_running, seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf", type=Path, help="another PDF with an outline")
    args = parser.parse_args(argv)
    settings = Settings()
    path = args.pdf or settings.dataset_path("runbooks-dev", "pdf", "NIST.SP.800-61r2.pdf")
    if path is None or not path.is_file():
        print(
            "NIST.SP.800-61r2.pdf not found: set WB_DATASETS_DIR to the development data sets "
            "(runbooks-dev/pdf/NIST.SP.800-61r2.pdf inside it), or pass --pdf PATH.",
            file=sys.stderr,
        )
        return 2
    from pypdf import PdfReader

    started = time.perf_counter()
    reader = PdfReader(path)
    index = page_index(reader)
    before_seconds = time.perf_counter() - started
    entries = outline(reader)
    print(f"{path.name}: {len(reader.pages)} pages, {len(entries)} outline entries")
    before = measure(
        legacy_document(index.raw_pages, path.name), settings, index, entries, before_seconds
    )
    started = time.perf_counter()
    doc = new_document(path)
    after = measure(doc, settings, index, entries, time.perf_counter() - started)
    print(f"chunk size {settings.runbook_chunk_size}, overlap {settings.runbook_chunk_overlap}")
    started = time.perf_counter()
    fonts = measure(
        fonts_only_document(path), settings, index, entries, time.perf_counter() - started
    )
    print(before.line("before"))
    print(after.line("after"))
    print(fonts.line("fonts"))
    print("  (fonts: the new reader with the outline ignored, checked against the outline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
