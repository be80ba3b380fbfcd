"""Regenerate the sample PDF runbooks in data/runbooks/ from data/runbook_sources/*.txt.

About the corpus
----------------
data/runbooks/ is the embedded default corpus of the runbook chat page: 16 Japanese Markdown
runbooks (phishing report, malware, ransomware isolation, account compromise, AD lockout, VPN,
EDR isolation, firewall change, evidence preservation, DDoS, data leakage, privileged IDs,
backup restore, emergency patching, escalation contacts, shift handover) plus the PDFs written
by this script (initial triage / severity classification, cloud account compromise). All of it
was written for this project: the organisation is fictional, hosts use corp.example, mail
addresses example.jp, IP addresses the documentation ranges of RFC 5737, and contacts are roles.
Several runbooks describe dangerous operations (削除, 無効化, shutdown /s, rm -rf, DROP TABLE,
format C:, Remove-Item -Recurse, ...) next to an explicit approval step so that the guardrails
have something to flag. Everything in data/runbooks/ is indexed: keep README files and other
non-runbook material out of it.

Source format
-------------
The PDF sources are plain text (.txt rather than .md, so that a loader pointed at data/ does
not index the same runbook twice). One element per line:

    line 1                      the title
    文書番号: ...                a metadata line (small print)
    1. 目的 / 2.1 影響範囲の確認   a numbered heading, rendered alone on its line, without '#'
    two leading spaces          a command, rendered in a shaded box
    anything else               a paragraph or a step such as "(1) ..."

Font
----
The committed PDFs are the artifacts; this script only regenerates them. It needs a Japanese
TrueType font with glyf outlines, e.g. IPAGothic (Debian/Ubuntu: ``apt-get install
fonts-ipafont-gothic``), IPAexGothic, Takao or VL Gothic; pass one with ``--font PATH``
otherwise. CFF-based OpenType fonts such as Noto Sans CJK (.otf/.ttc) are refused: fpdf2 embeds
them with an embedded CMap encoding that pypdf decodes one byte at a time, so the extracted
text comes back as garbage. fpdf2 subsets the font, so each PDF stays small.

After writing each PDF the script extracts its text with pypdf and checks that every source
line comes back verbatim (modulo whitespace) and every heading on a line of its own.

Usage: .venv/bin/python scripts/make_runbook_pdfs.py [--font PATH] [--sources DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from fontTools.ttLib import TTFont
from fpdf import FPDF
from fpdf.enums import XPos, YPos

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCES = ROOT / "data" / "runbook_sources"
DEFAULT_OUT = ROOT / "data" / "runbooks"

# Fixed so that regenerating unchanged sources gives byte-identical PDFs.
CREATION_DATE = datetime(2025, 4, 1, 9, 0, 0, tzinfo=UTC)

FONT_CANDIDATES = (
    "/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf",
    "/usr/share/fonts/truetype/fonts-japanese-gothic.ttf",
    "/usr/share/fonts/opentype/ipaexfont-gothic/ipaexg.ttf",
    "/usr/share/fonts/truetype/ipaexfont-gothic/ipaexg.ttf",
    "/usr/share/fonts/truetype/takao-gothic/TakaoGothic.ttf",
    "/usr/share/fonts/truetype/vlgothic/VL-Gothic-Regular.ttf",
    "/Library/Fonts/ipag.ttf",
    "C:/Windows/Fonts/msgothic.ttc",
)

HEADING_RE = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+\S")
STEP_RE = re.compile(r"^\(\d+\)\s*")
META_PREFIX = "文書番号"
HANGING_PUNCTUATION = frozenset("、。，．）」』】〕！？")


class FontNotFoundError(RuntimeError):
    """No usable Japanese TrueType font was found."""


@dataclass(frozen=True)
class Line:
    kind: str  # "title", "meta", "h1", "h2", "code", "text"
    text: str


def parse_source(text: str) -> list[Line]:
    """Classify each non-empty line of a source file."""
    raw = [line.rstrip() for line in text.splitlines() if line.strip()]
    if not raw:
        raise ValueError("empty source")
    lines = [Line("title", raw[0].strip())]
    for line in raw[1:]:
        stripped = line.strip()
        if line.startswith("  "):
            lines.append(Line("code", stripped))
        elif stripped.startswith(META_PREFIX):
            lines.append(Line("meta", stripped))
        elif match := HEADING_RE.match(stripped):
            depth = match.group(1).count(".") + 1
            lines.append(Line("h1" if depth == 1 else "h2", stripped))
        else:
            lines.append(Line("text", stripped))
    return lines


def _is_usable_font(path: Path, needed: set[str]) -> str | None:
    """Return None if the font can render ``needed``, else the reason it cannot."""
    try:
        font = TTFont(str(path), fontNumber=0, lazy=True)
    except Exception as exc:
        return f"unreadable ({exc})"
    try:
        if "glyf" not in font:
            return "CFF outlines (pypdf cannot extract text that fpdf2 writes with them)"
        cmap = font.getBestCmap() or {}
        missing = sorted(ch for ch in needed if ord(ch) not in cmap and not ch.isspace())
        if missing:
            return f"missing glyphs for {''.join(missing[:20])!r}"
        return None
    finally:
        font.close()


def _fc_list_fonts() -> list[str]:
    if shutil.which("fc-list") is None:
        return []
    try:
        out = subprocess.run(
            ["fc-list", ":lang=ja", "file"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    files = {line.split(":")[0].strip() for line in out.splitlines() if line.strip()}
    return sorted(f for f in files if f.lower().endswith((".ttf", ".ttc")))


def find_font(needed: set[str], explicit: Path | None = None) -> Path:
    """Pick a glyf-outline Japanese font, or raise FontNotFoundError with the reasons."""
    candidates = [str(explicit)] if explicit else [*FONT_CANDIDATES, *_fc_list_fonts()]
    rejected: list[str] = []
    for candidate in candidates:
        path = Path(candidate)
        if not path.is_file():
            if explicit:
                rejected.append(f"{path}: not found")
            continue
        reason = _is_usable_font(path, needed)
        if reason is None:
            return path
        rejected.append(f"{path}: {reason}")
    details = "\n  ".join(rejected) or "no Japanese font found"
    raise FontNotFoundError(
        "No usable Japanese TrueType font (glyf outlines) for the runbook PDFs.\n"
        f"  {details}\n"
        "Install one (e.g. `apt-get install fonts-ipafont-gothic`) or pass --font PATH."
    )


def wrap_text(pdf: FPDF, text: str, width: float, next_width: float | None = None) -> list[str]:
    """Break ``text`` into lines no wider than ``width`` (``next_width`` after the first).

    Japanese breaks between any two characters, except that closing punctuation hangs at the
    end of the line (burasage) instead of starting the next one; a run of ASCII is broken at
    its last space so that commands and English words are not cut in two.
    """
    lines: list[str] = []
    current = ""
    limit = width
    for ch in text:
        if not current or pdf.get_string_width(current + ch) <= limit:
            current += ch
            continue
        if ch in HANGING_PUNCTUATION:
            lines.append(current + ch)
            current = ""
        else:
            cut = current.rfind(" ")
            tail = current[cut + 1 :] + ch
            if cut > 0 and tail.isascii():
                lines.append(current[:cut].rstrip())
                current = tail
            else:
                lines.append(current)
                current = ch
        limit = next_width if next_width is not None else width
        current = current.lstrip()
    if current:
        lines.append(current)
    return lines


def render_pdf(lines: list[Line], font_path: Path, out_path: Path) -> None:
    """Write ``lines`` as an A4 PDF with the Japanese font embedded as a subset."""
    pdf = FPDF(format="A4")
    pdf.set_margins(20, 18, 20)
    pdf.set_auto_page_break(auto=True, margin=18)
    pdf.c_margin = 0
    pdf.add_font("jp", fname=str(font_path))
    pdf.set_title(lines[0].text)
    pdf.set_author("SOC運用チーム（サンプル手順書）")
    pdf.set_subject("SOC runbook sample for the workbench")
    pdf.set_creator("scripts/make_runbook_pdfs.py")
    pdf.set_lang("ja")
    pdf.set_creation_date(CREATION_DATE)
    pdf.add_page()

    def block(text: str, size: float, height: float, indent: float = 0, fill: bool = False):
        """One source line: wrapped, with a hanging indent after a "(n) " step number."""
        pdf.set_font("jp", size=size)
        width = pdf.epw - indent
        hang = 0.0
        if step := STEP_RE.match(text):
            hang = pdf.get_string_width(step.group(0))
        for i, part in enumerate(wrap_text(pdf, text, width, width - hang)):
            offset = indent + (hang if i else 0)
            pdf.set_x(pdf.l_margin + offset)
            pdf.cell(pdf.epw - offset, height, part, fill=fill, new_x=XPos.LMARGIN, new_y=YPos.NEXT)

    for line in lines:
        if line.kind == "title":
            block(line.text, 16, 9)
            pdf.set_draw_color(60, 60, 60)
            pdf.line(pdf.l_margin, pdf.get_y() + 1, pdf.l_margin + pdf.epw, pdf.get_y() + 1)
            pdf.ln(3)
        elif line.kind == "meta":
            pdf.set_text_color(90, 90, 90)
            block(line.text, 8.5, 5)
            pdf.set_text_color(0, 0, 0)
            pdf.ln(2)
        elif line.kind == "h1":
            pdf.ln(3)
            block(line.text, 13, 8)
        elif line.kind == "h2":
            pdf.ln(1)
            block(line.text, 11.5, 7, indent=2)
        elif line.kind == "code":
            pdf.set_fill_color(238, 238, 238)
            block(line.text, 8.5, 5.5, indent=8, fill=True)
            pdf.ln(1)
        else:
            block(line.text, 10.5, 6.2, indent=4 if STEP_RE.match(line.text) else 2)
    pdf.output(str(out_path))


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def verify_pdf(lines: list[Line], pdf_path: Path) -> list[str]:
    """Return the problems found when extracting ``pdf_path`` back with pypdf."""
    from pypdf import PdfReader

    text = "\n".join(page.extract_text() or "" for page in PdfReader(pdf_path).pages)
    squashed = _squash(text)
    extracted_lines = {line.strip() for line in text.splitlines()}
    problems = [
        f"not extracted verbatim: {line.text}"
        for line in lines
        if _squash(line.text) not in squashed
    ]
    problems += [
        f"heading not on a line of its own: {line.text}"
        for line in lines
        if line.kind in ("h1", "h2") and line.text not in extracted_lines
    ]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--font", type=Path, help="Japanese TrueType font (.ttf/.ttc)")
    parser.add_argument("--sources", type=Path, default=DEFAULT_SOURCES)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)

    sources = sorted(args.sources.glob("*.txt"))
    if not sources:
        print(f"error: no *.txt sources in {args.sources}", file=sys.stderr)
        return 2
    parsed = {src: parse_source(src.read_text(encoding="utf-8")) for src in sources}
    needed = {ch for lines in parsed.values() for line in lines for ch in line.text}
    try:
        font_path = find_font(needed, args.font)
    except FontNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"font: {font_path}")

    args.out.mkdir(parents=True, exist_ok=True)
    failed = False
    for src, lines in parsed.items():
        out_path = args.out / f"{src.stem}.pdf"
        render_pdf(lines, font_path, out_path)
        problems = verify_pdf(lines, out_path)
        size_kb = out_path.stat().st_size / 1024
        status = "ok" if not problems else f"{len(problems)} problem(s)"
        print(
            f"{out_path.relative_to(ROOT) if out_path.is_relative_to(ROOT) else out_path}"
            f": {size_kb:.1f} KB, round trip {status}"
        )
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
