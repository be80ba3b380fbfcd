"""Reading PDFs into text and headings (core.ingest.pdf) on PDFs written here with fpdf2.

English text uses fpdf2's core Helvetica. Japanese text, private-use bullet glyphs and ▪ / •
use a TrueType font built at test time with fontTools (a box glyph per character: fpdf2 embeds
it with a ToUnicode map, so pypdf reads the characters back), so no system font is needed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fontTools.fontBuilder import FontBuilder
from fontTools.pens.ttGlyphPen import TTGlyphPen
from fpdf import FPDF
from pypdf import PdfReader

from core.errors import SourceFileError
from core.ingest.loaders import load_file
from core.ingest.pdf_lines import FontWidths, is_cjk
from core.schemas.documents import Document
from core.text.chunking import chunk_document
from core.text.normalize import normalize_text
from tests.conftest import SAMPLE_RUNBOOKS

LOREM = (
    "Responders collect volatile evidence before they change anything on the host, record "
    "every action with its time in the ticket, and keep the chain of custody for each item "
    "they remove from the site so that the evidence can be used later if it is needed."
)
JA_PARAGRAPH = (
    "初動対応では、端末をネットワークから切り離す前に揮発性の情報を保全し、"
    "実施した操作と時刻をチケットに記録する。証拠の受け渡しは管理者の承認を得てから行い、"
    "保管庫に入れるまでの経路をすべて残す。"
)
PUA_BULLET = "\uf0a7"
# 「⼿順」「⽬的」 as some CJK fonts' /ToUnicode tables give them: Kangxi radicals U+2F3F, U+2F6C
KANGXI = "\u2f3f\u2f6c"
# 「長」 as Noto CJK JP gives it in Chromium's PDFs: the radical supplement U+2ED1, which NFKC
# leaves alone
LONG_RADICAL = "\u2ed1"


def make_font(path: Path, bold: bool = False, latin_width: int = 500) -> Path:
    """A TrueType font with a box glyph for ASCII, the Japanese test text and bullet glyphs;
    ``latin_width``: the advance of the ASCII glyphs (per 1000 em)."""
    chars = {chr(c) for c in range(0x20, 0x7F)}
    chars |= set(JA_PARAGRAPH + "手順書目的範囲概要連絡先対応確認項目") | set("▪•" + PUA_BULLET)
    chars |= set(KANGXI) | set(LONG_RADICAL) | set("長期間")
    cmap = {ord(ch): f"g{ord(ch):05X}" for ch in sorted(chars)}
    order = [".notdef", *cmap.values()]
    builder = FontBuilder(1000, isTTF=True)
    builder.setupGlyphOrder(order)
    builder.setupCharacterMap(cmap)
    glyphs = {}
    for name in order:
        pen = TTGlyphPen(None)
        if name not in (".notdef", "g00020"):
            pen.moveTo((50, 0))
            pen.lineTo((50, 700))
            pen.lineTo((400, 700))
            pen.lineTo((400, 0))
            pen.closePath()
        glyphs[name] = pen.glyph()
    builder.setupGlyf(glyphs)
    widths = {".notdef": 500}
    for code, name in cmap.items():
        widths[name] = 1000 if is_cjk(chr(code)) else latin_width
    builder.setupHorizontalMetrics({name: (width, 0) for name, width in widths.items()})
    builder.setupHorizontalHeader(ascent=880, descent=-120)
    family = ("WbTestBold" if bold else "WbTest") + ("" if latin_width == 500 else "Wide")
    builder.setupNameTable(
        {"familyName": family, "styleName": "Bold" if bold else "Regular", "psName": family}
    )
    builder.setupOS2(sTypoAscender=880, sTypoDescender=-120, usWinAscent=880, usWinDescent=120)
    builder.setupPost()
    builder.save(str(path))
    return path


@pytest.fixture(scope="module")
def font(tmp_path_factory) -> Path:
    return make_font(tmp_path_factory.mktemp("font") / "wbtest.ttf")


def new_pdf() -> FPDF:
    pdf = FPDF(format="A4")
    pdf.set_margins(20, 20, 20)
    pdf.set_auto_page_break(auto=True, margin=20)
    pdf.c_margin = 0
    return pdf


def font_pdf(font: Path) -> FPDF:
    """A new PDF with the test font as family "wb" (Japanese, bullets), on its first page."""
    pdf = new_pdf()
    pdf.add_font("wb", fname=str(font))
    pdf.add_page()
    return pdf


def write(pdf: FPDF, text: str, size: float = 11, style: str = "", family: str = "Helvetica"):
    pdf.set_font(family, style=style, size=size)
    pdf.multi_cell(0, size * 0.5, text, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(size * 0.3)


def load(tmp_path: Path, pdf: FPDF, name: str = "doc.pdf") -> Document:
    path = tmp_path / name
    pdf.output(str(path))
    doc, _ = load_file(path, tmp_path, 10_000_000)
    assert doc.kind == "pdf"
    assert normalize_text(doc.text) == doc.text  # already normal: heading spans stay valid
    for heading in doc.headings or ():
        assert doc.text[heading.start : heading.end] == heading.title
        assert heading.start == 0 or doc.text[heading.start - 1] == "\n"
        assert heading.end == len(doc.text) or doc.text[heading.end] == "\n"
    return doc


def tree(doc: Document) -> list[tuple[int, str]]:
    return [(h.level, h.title) for h in doc.headings or ()]


def sections(doc: Document) -> list[tuple[int, str]]:
    """The section tree under the document's title, which heads a PDF whose first page shows
    it (as a page's h1 or a Word document's Title does): levels counted from the sections."""
    heads = tree(doc)
    assert heads and heads[0] == (1, doc.title), heads
    assert all(level > 1 for level, _ in heads[1:]), heads
    return [(level - 1, title) for level, title in heads[1:]]


def section_of(doc: Document, phrase: str) -> tuple[str, ...]:
    """The heading path of the chunk that holds ``phrase``."""
    for chunk in chunk_document(doc, 500, 50):
        if phrase in chunk.body:
            return chunk.heading_path
    raise AssertionError(f"{phrase!r} is in no chunk")


# --- outline ----------------------------------------------------------------------------------


def test_outline_gives_headings_levels_and_spans(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Incident Handling Guide", 20, "B")
    pdf.start_section("Preparation", level=0)
    write(pdf, "1 Preparation", 14, "B")
    write(pdf, "Teams prepare jump bags. " + LOREM)
    pdf.start_section("Tools and Facilities", level=1)
    # the page shows the title with other spacing and case than the bookmark
    write(pdf, "1.1  TOOLS AND  FACILITIES", 12, "B")
    write(pdf, "Forensic workstations are kept ready. " + LOREM)
    pdf.add_page()
    pdf.start_section("Detection", level=0)
    write(pdf, "2 Detection", 14, "B")
    write(pdf, "Alerts are triaged within minutes. " + LOREM)
    # an entry whose title is not on the page is written as its own line where it points
    pdf.start_section("Signs of an Incident", level=1)
    write(pdf, "Precursors and indicators differ. " + LOREM)
    doc = load(tmp_path, pdf)
    assert sections(doc) == [
        (1, "1 Preparation"),
        (2, "1.1 TOOLS AND FACILITIES"),
        (1, "2 Detection"),
        (2, "Signs of an Incident"),
    ]
    assert section_of(doc, "jump bags") == (
        doc.title,
        "1 Preparation",
    )
    assert section_of(doc, "Forensic workstations") == (
        doc.title,
        "1 Preparation",
        "1.1 TOOLS AND FACILITIES",
    )
    assert section_of(doc, "Alerts are triaged") == (
        doc.title,
        "2 Detection",
    )
    assert section_of(doc, "Precursors and indicators") == (
        doc.title,
        "2 Detection",
        "Signs of an Incident",
    )


def test_a_cover_title_over_two_lines_is_the_title_of_a_pdf_with_an_outline(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "IRP-Phishing: Credential Phishing", 22, "B")
    write(pdf, "in Cloud Mail Environments", 22, "B")
    write(pdf, "Version 2.1, owned by the security operations team. " + LOREM)
    pdf.start_section("Overview", level=0)
    write(pdf, "Overview", 16, "B")
    write(pdf, "This playbook covers phishing that harvests credentials. " + LOREM)
    doc = load(tmp_path, pdf)
    assert doc.title == "IRP-Phishing: Credential Phishing in Cloud Mail Environments"
    assert doc.text.startswith("IRP-Phishing: Credential Phishing in Cloud Mail Environments\n")
    assert sections(doc) == [(1, "Overview")]


def test_a_contents_bookmark_heads_nothing_and_its_children_move_up(tmp_path: Path):
    # a word processor nests every section under the 目次 / Contents heading's bookmark when
    # the sections are one level below it
    pdf = new_pdf()
    pdf.add_page()
    pdf.start_section("Contents", level=0)
    write(pdf, "Contents", 16, "B")
    write(pdf, f"Overview {'.' * 60} 2")
    write(pdf, f"Escalation {'.' * 60} 2")
    pdf.add_page()
    pdf.start_section("Overview", level=1)
    write(pdf, "Overview", 16, "B")
    write(pdf, "What this covers. " + LOREM)
    pdf.start_section("Scope", level=2)
    write(pdf, "Scope", 13, "B")
    write(pdf, "Which hosts are in scope. " + LOREM)
    pdf.start_section("Escalation", level=1)
    write(pdf, "Escalation", 16, "B")
    write(pdf, "Call the lead. " + LOREM)
    doc = load(tmp_path, pdf)
    assert tree(doc) == [(1, "Overview"), (2, "Scope"), (1, "Escalation")]
    assert section_of(doc, "Call the lead") == ("Escalation",)
    assert "Contents" not in doc.text


def test_a_japanese_cover_title_over_two_lines_joins_without_a_space(tmp_path: Path, font: Path):
    pdf = font_pdf(font)
    write(pdf, "対応手順書", 22, family="wb")
    write(pdf, "確認項目", 22, family="wb")
    pdf.start_section("概要", level=0)
    write(pdf, "概要", 16, family="wb")
    write(pdf, JA_PARAGRAPH, family="wb")
    doc = load(tmp_path, pdf)
    assert doc.title == "対応手順書確認項目"
    assert doc.text.startswith("対応手順書確認項目\n")  # one line of text too
    assert sections(doc) == [(1, "概要")]


def test_a_japanese_outline_heading_wrapped_over_two_lines_joins_without_a_space(
    tmp_path: Path, font: Path
):
    """A Word export's long heading, wrapped by the page width: its bookmark is one title, and
    the heading read from the page has no space where the line broke."""
    title = "初動対応で端末をネットワークから切り離す前に揮発性の情報を保全する手順"
    pdf = font_pdf(font)
    write(pdf, "対応手順書", 22, family="wb")
    pdf.start_section(title, level=0)
    pdf.set_font("wb", size=16)
    pdf.multi_cell(90, 8, title, new_x="LMARGIN", new_y="NEXT")  # wraps mid-word
    write(pdf, JA_PARAGRAPH, family="wb")
    doc = load(tmp_path, pdf)
    assert sections(doc) == [(1, title)]


def test_a_flat_outline_is_nested_by_its_numbers(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    for title in ["2. Detection", "2.1 Triage", "2.1.1 Queues", "2.2 Analysis", "3. Recovery"]:
        pdf.start_section(title, level=0)  # every entry at the top level of the outline
        write(pdf, title, 13, "B")
        write(pdf, f"Work for {title}. " + LOREM)
    doc = load(tmp_path, pdf)
    assert [h.level for h in doc.headings] == [1, 2, 3, 2, 1]
    assert section_of(doc, "Work for 2.1.1 Queues") == (
        "2. Detection",
        "2.1 Triage",
        "2.1.1 Queues",
    )


def test_outline_title_at_the_start_of_a_paragraph_is_split_from_it(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    pdf.start_section("Organizations should plan for incidents.", level=0)
    write(pdf, "Organizations should plan for incidents. Planning starts early. " + LOREM)
    doc = load(tmp_path, pdf)
    assert tree(doc) == [(1, "Organizations should plan for incidents.")]
    assert section_of(doc, "Planning starts early") == ("Organizations should plan for incidents.",)


# --- fonts ------------------------------------------------------------------------------------


def test_two_heading_sizes_without_outline(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Ransomware Response Playbook", 20, "B")
    write(pdf, "Containment", 16, "B")
    write(pdf, "Isolate the host. " + LOREM)
    write(pdf, "Network isolation", 13, "B")
    write(pdf, "Unplug the cable or use the EDR. " + LOREM)
    # a numbered list at the body size is a list, not headings
    write(pdf, "1. Confirm the scope")
    write(pdf, "2. Notify the lead")
    write(pdf, "Recovery", 16, "B")
    write(pdf, "Restore from backups. " + LOREM)
    doc = load(tmp_path, pdf)
    assert doc.title == "Ransomware Response Playbook"
    assert sections(doc) == [(1, "Containment"), (2, "Network isolation"), (1, "Recovery")]
    assert section_of(doc, "Unplug the cable") == (doc.title, "Containment", "Network isolation")
    assert section_of(doc, "2. Notify the lead") == (doc.title, "Containment", "Network isolation")
    assert section_of(doc, "Restore from backups") == (
        doc.title,
        "Recovery",
    )


def test_a_short_page_s_one_section_heading_is_above_its_subsections(tmp_path: Path):
    """A wiki page printed to PDF: a title, an introduction, one h2 (its style used once) and
    the h3s under it. The h2 heads a section (it comes after running text), it is no cover
    lettering to be ranked with the h3s."""
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "On-call Guide", 20, "B")
    write(pdf, "This page explains how the security team runs its on-call rotation. " + LOREM)
    write(pdf, "Weekend on-call", 16, "B")
    write(pdf, "Responsibilities", 13, "B")
    write(pdf, "Acknowledge every page within fifteen minutes. " + LOREM)
    write(pdf, "Time off", 13, "B")
    write(pdf, "Take two working days off after a weekend shift. " + LOREM)
    doc = load(tmp_path, pdf)
    assert doc.title == "On-call Guide"
    assert sections(doc) == [(1, "Weekend on-call"), (2, "Responsibilities"), (2, "Time off")]
    assert section_of(doc, "Take two working days") == (doc.title, "Weekend on-call", "Time off")


def test_numbered_headings_in_a_smaller_style_are_subsections_not_chapters(tmp_path: Path):
    """「1. 新システム準備」 set smaller than the unnumbered heading above it numbers the steps
    of that section: it is no chapter 1, and the next unnumbered heading is no sub-section of
    step 4."""
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Backup Procedures", 20, "B")
    write(pdf, "Backup policy", 16, "B")
    write(pdf, "Daily backups are kept for seven days. " + LOREM)
    write(pdf, "Disaster recovery", 16, "B")
    write(pdf, "Follow these steps in order. " + LOREM)
    for step in ("1. Prepare a new host", "2. Restore the project", "3. Restore the data"):
        write(pdf, step, 13, "B")
        write(pdf, "Check the result before you go on. " + LOREM)
    write(pdf, "Emergency contacts", 16, "B")
    write(pdf, "Call the on-call administrator first. " + LOREM)
    doc = load(tmp_path, pdf)
    assert sections(doc) == [
        (1, "Backup policy"),
        (1, "Disaster recovery"),
        (2, "1. Prepare a new host"),
        (2, "2. Restore the project"),
        (2, "3. Restore the data"),
        (1, "Emergency contacts"),
    ]
    assert section_of(doc, "Call the on-call administrator") == (
        doc.title,
        "Emergency contacts",
    )


def test_the_title_on_the_first_page_heads_the_document_as_a_markdown_h1_does(tmp_path: Path):
    # the same runbook as Markdown (an h1, its lead, two sections) and as a PDF with its title
    # set large on the first page: the chunks carry the same heading paths, the lead's too
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Ransomware Response Playbook", 22, "B")
    write(pdf, "This playbook covers encrypted hosts. " + LOREM)
    write(pdf, "Containment", 16, "B")
    write(pdf, "Unplug the cable first. " + LOREM)
    write(pdf, "Recovery", 16, "B")
    write(pdf, "Restore from backups. " + LOREM)
    doc = load(tmp_path, pdf)
    markdown = tmp_path / "playbook.md"
    markdown.write_text(
        "# Ransomware Response Playbook\n\nThis playbook covers encrypted hosts. "
        f"{LOREM}\n\n## Containment\n\nUnplug the cable first. {LOREM}\n\n## Recovery\n\n"
        f"Restore from backups. {LOREM}\n",
        encoding="utf-8",
    )
    md, _ = load_file(markdown, tmp_path, 10_000_000)
    assert tree(doc) == [(1, "Ransomware Response Playbook"), (2, "Containment"), (2, "Recovery")]
    for phrase in ("covers encrypted hosts", "Unplug the cable", "Restore from backups"):
        assert section_of(doc, phrase) == section_of(md, phrase)
    assert section_of(doc, "covers encrypted hosts") == ("Ransomware Response Playbook",)


def test_a_title_over_two_lines_is_one_title_not_two_headings(tmp_path: Path):
    """A cover with a title and its subtitle in the largest font: the document's title; the
    sections under it are top-level headings, not children of the subtitle."""
    pdf = new_pdf()
    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=20)
    pdf.multi_cell(0, 14, "EDR Operations Guide\nIncident Response Edition", new_x="LMARGIN")
    pdf.ln(4)
    write(pdf, "Version 2.1, April 2026")
    pdf.add_page()
    write(pdf, "Isolating a host", 14, "B")
    write(pdf, "Select the host in the console and click Isolate. " + LOREM)
    write(pdf, "Releasing a host", 14, "B")
    write(pdf, "Release only after the lead approves. " + LOREM)
    doc = load(tmp_path, pdf)
    assert doc.title == "EDR Operations Guide Incident Response Edition"
    assert sections(doc) == [(1, "Isolating a host"), (1, "Releasing a host")]
    assert section_of(doc, "Release only after") == (
        doc.title,
        "Releasing a host",
    )


def test_a_bold_sentence_heading_wrapped_over_lines_is_one_heading(tmp_path: Path):
    """An executive summary's bold sentences are its headings; wrapped, the lines that go on in
    lower case belong to the heading, not to the body under it."""
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Executive Summary", 16, "B")
    pdf.set_font("Helvetica", style="B", size=11)
    pdf.multi_cell(
        0,
        5.5,
        "Organizations should be generally prepared to handle any incident but should focus on"
        " being prepared to handle incidents that use common attack vectors",
        new_x="LMARGIN",
        new_y="NEXT",
    )
    pdf.ln(3)
    write(pdf, "Incidents can occur in countless ways. " + LOREM)
    doc = load(tmp_path, pdf)
    heading = tree(doc)[-1][1]
    assert heading.startswith("Organizations should be generally prepared")
    assert heading.endswith("incidents that use common attack vectors")
    assert section_of(doc, "Incidents can occur")[-1] == heading


def test_a_heading_and_a_cell_wrapped_after_a_hyphen_keep_it_and_no_space(tmp_path: Path):
    # a narrow column breaks a heading and a cell after a hyphen, as word processors do: the
    # hyphen is the word's own, so the pieces join without a space
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Ransomware in AWS", 18, "B")
    write(pdf, LOREM)
    pdf.set_font("Helvetica", style="B", size=14)
    for line in ("4.3 Recovery Decision: Backup-", "First Approach"):
        pdf.cell(0, 7, line, new_x="LMARGIN", new_y="NEXT")
    write(pdf, "Restore from the last clean backup before anything else.")
    write(pdf, "5. Lessons", 14, "B")
    write(pdf, LOREM)
    pdf.set_font("Helvetica", size=10)
    # the cell is too narrow for the whole name: its line breaks after the name's hyphen
    width = pdf.get_string_width("STSTokenAbuse") + 4
    assert pdf.get_string_width("IRP-STSTokenAbuse") > width - 3
    edges = [20.0, 60.0, 60.0 + width]
    bottom = _ruled_row(pdf, pdf.get_y() + 4, edges, [["Related"], ["IRP-", "STSTokenAbuse"]])
    _ruled_row(pdf, bottom, edges, [["Owner"], ["IR lead"]])
    doc = load(tmp_path, pdf)
    titles = [title for _, title in tree(doc)]
    assert (
        "4.3 Recovery Decision: Backup-First Approach" in titles and "First Approach" not in titles
    )
    assert "Related | IRP-STSTokenAbuse" in doc.text.splitlines()


def test_bold_table_rows_cell_pieces_and_sentences_are_not_headings(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Scope", 14, "B")
    write(pdf, "This playbook covers ransomware. " + LOREM)
    pdf.set_font("Helvetica", style="B", size=11)
    pdf.cell(60, 6, "Role")  # a table's header row: cells set far apart
    pdf.cell(60, 6, "Responsibility")
    pdf.cell(50, 6, "When to Engage", new_x="LMARGIN", new_y="NEXT")
    write(pdf, "SOC 2 (Trust Services", 11, "B")  # a bold cell wrapped over two lines
    write(pdf, "Criteria)", 11, "B")
    write(pdf, "If data is being destroyed, it is P1. Proceed to containment now", 11, "B")
    write(pdf, "33/34", 11, "B")
    write(pdf, "Escalation", 14, "B")
    write(pdf, "Call the duty manager. " + LOREM)
    doc = load(tmp_path, pdf)
    assert tree(doc) == [(1, "Scope"), (1, "Escalation")]
    assert section_of(doc, "Criteria)") == ("Scope",)


def test_bold_body_size_headings_rank_below_larger_ones(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Eradication", 16, "B")
    write(pdf, "Remove the malware. " + LOREM)
    write(pdf, "Rebuilding hosts", 11, "B")
    write(pdf, "Reimage from a known-good image. " + LOREM)
    write(pdf, "Recovery", 16, "B")
    write(pdf, "Bring the service back. " + LOREM)
    write(pdf, "When is the incident closed?", 11, "B")  # a question is a heading too
    write(pdf, "After the lessons-learned meeting. " + LOREM)
    write(pdf, "Owners:", 11, "B")  # a run-in label ending in a colon is not
    write(pdf, "The incident lead. " + LOREM)
    write(pdf, "If the host is still encrypting files:", 11, "B")  # a bold clause with one is
    write(pdf, "- Pull the network cable and keep the host powered on.")
    doc = load(tmp_path, pdf)
    assert tree(doc) == [
        (1, "Eradication"),
        (2, "Rebuilding hosts"),
        (1, "Recovery"),
        (2, "When is the incident closed?"),
        (2, "If the host is still encrypting files:"),
    ]
    assert section_of(doc, "Pull the network cable") == (
        "Recovery",
        "If the host is still encrypting files:",
    )
    assert section_of(doc, "known-good image") == ("Eradication", "Rebuilding hosts")


def test_numbered_questions_set_in_as_a_list_still_head_their_answers(tmp_path: Path):
    # an FAQ whose bold questions are numbered and set in as a list is (NIST SP 800-61's
    # appendix); an unnumbered bold line set in the same way is a callout's title, no heading
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Frequently Asked Questions", 16, "B")
    write(pdf, LOREM)
    for number, question in enumerate(("What is an incident?", "Who handles it?"), 1):
        pdf.set_x(30)
        pdf.set_font("Helvetica", style="B", size=11)
        pdf.multi_cell(0, 5.5, f"{number}. {question}", new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)
        write(pdf, LOREM)
    pdf.set_x(30)
    pdf.set_font("Helvetica", style="B", size=11)
    pdf.multi_cell(0, 5.5, "Before you call the hotline", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)
    write(pdf, LOREM)
    doc = load(tmp_path, pdf)
    titles = [t for _, t in tree(doc)]
    assert "1. What is an incident?" in titles and "2. Who handles it?" in titles, titles
    assert "Before you call the hotline" not in titles


def test_appendices_and_numbered_questions_nest_without_outline(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "1. Introduction", 16, "B")
    write(pdf, "Why this guide exists. " + LOREM)
    write(pdf, "2. Handling an Incident", 16, "B")
    write(pdf, "2.1 Preparation", 13, "B")
    write(pdf, "Keep jump bags ready. " + LOREM)
    # bold list items, a bold URL line and a bold sentence are not headings
    write(pdf, "- Keep a list of contacts", 11, "B")
    write(pdf, "http://example.org/guide", 13, "B")
    write(pdf, "Organizations should rehearse their response plans.", 11, "B")
    write(pdf, "Rehearse twice a year. " + LOREM)
    write(pdf, "Appendix A - Frequently Asked Questions", 16, "B")
    write(pdf, "A.1 General", 13, "B")
    write(pdf, "1. What is an incident?", 11, "B")  # numbered again: items, not chapter 1
    write(pdf, "A violation of security policy. " + LOREM)
    write(pdf, "2. Who handles it?", 11, "B")
    write(pdf, "The incident response team. " + LOREM)
    doc = load(tmp_path, pdf)
    assert tree(doc) == [
        (1, "1. Introduction"),
        (1, "2. Handling an Incident"),
        (2, "2.1 Preparation"),
        (1, "Appendix A - Frequently Asked Questions"),
        (2, "A.1 General"),
        (3, "1. What is an incident?"),
        (3, "2. Who handles it?"),
    ]
    assert section_of(doc, "Rehearse twice a year") == (
        "2. Handling an Incident",
        "2.1 Preparation",
    )
    assert section_of(doc, "The incident response team") == (
        "Appendix A - Frequently Asked Questions",
        "A.1 General",
        "2. Who handles it?",
    )


def test_one_font_size_falls_back_to_numbered_lines(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "1. Scope")
    write(pdf, "This runbook covers lost laptops. " + LOREM)
    write(pdf, "2. Steps")
    write(pdf, "Lock the device remotely. " + LOREM)
    write(pdf, "2.1 Reporting")
    write(pdf, "Report to the privacy office. " + LOREM)
    doc = load(tmp_path, pdf)
    assert tree(doc) == [(1, "1. Scope"), (1, "2. Steps"), (2, "2.1 Reporting")]
    assert section_of(doc, "privacy office") == ("2. Steps", "2.1 Reporting")


def test_one_font_and_no_numbers_is_read_without_headings(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Plain memo")
    write(pdf, LOREM)
    doc = load(tmp_path, pdf)
    assert doc.headings == ()
    assert "chain of custody" in doc.text
    assert chunk_document(doc, 500, 50)


# --- table of contents ------------------------------------------------------------------------


def test_table_of_contents_is_dropped_and_never_a_heading(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Table of Contents", 16, "B")
    for entry, page in [
        ("1. Preparation", 2),
        ("2. Detection and Analysis", 2),
        ("3. Recovery", 3),
    ]:
        write(pdf, f"{entry} {'.' * 60} {page}")
    pdf.add_page()
    write(pdf, "1. Preparation", 16, "B")
    write(pdf, "Prepare the jump bag. " + LOREM)
    write(pdf, "2. Detection and Analysis", 16, "B")
    write(pdf, "Analyse the alerts. " + LOREM)
    pdf.add_page()
    write(pdf, "3. Recovery", 16, "B")
    write(pdf, "Restore the service. " + LOREM)
    doc = load(tmp_path, pdf)
    assert ".........." not in doc.text
    assert doc.text.count("3. Recovery") == 1
    assert tree(doc) == [
        (1, "1. Preparation"),
        (1, "2. Detection and Analysis"),
        (1, "3. Recovery"),
    ]
    assert section_of(doc, "Prepare the jump bag") == ("1. Preparation",)
    assert section_of(doc, "Analyse the alerts") == ("2. Detection and Analysis",)


def test_contents_without_leaders_after_a_contents_heading(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Contents", 16, "B")
    for entry, page in [("Overview", 2), ("Escalation", 2), ("Contacts", 3)]:
        write(pdf, f"{entry}    {page}")
    pdf.add_page()
    write(pdf, "Overview", 16, "B")
    write(pdf, "What this covers. " + LOREM)
    write(pdf, "Escalation", 16, "B")
    write(pdf, "Call the lead. " + LOREM)
    doc = load(tmp_path, pdf)
    assert "Contacts" not in doc.text
    assert [t for _, t in tree(doc)] == ["Overview", "Escalation"]


def test_what_follows_the_contents_is_not_under_a_contents_heading(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Table of Contents", 16, "B")
    write(pdf, f"Overview {'.' * 60} 2")
    write(pdf, f"Escalation {'.' * 60} 2")
    write(pdf, "Document owner: SOC lead. Review every six months.")
    pdf.add_page()
    write(pdf, "Overview", 16, "B")
    write(pdf, "What this covers. " + LOREM)
    doc = load(tmp_path, pdf)
    assert "Table of Contents" not in doc.text
    assert section_of(doc, "Document owner") == ()
    assert tree(doc)[0] == (1, "Overview")


def test_contents_end_where_the_body_starts_on_the_same_page(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Contents", 16, "B")
    write(pdf, "Scope    1")
    write(pdf, "Escalation    1")
    write(pdf, "Scope", 16, "B")
    write(pdf, "This plan was last revised in 2012")
    write(pdf, "Escalation", 16, "B")
    write(pdf, "Call the duty manager on extension 4410")
    doc = load(tmp_path, pdf)
    assert "This plan was last revised in 2012" in doc.text
    assert "Call the duty manager on extension 4410" in doc.text
    assert "Scope 1" not in doc.text and "Escalation 1" not in doc.text
    assert section_of(doc, "revised in 2012") == ("Scope",)


# --- running headers, footers, page numbers ---------------------------------------------------


class _Paged(FPDF):
    def header(self) -> None:
        self.set_font("Helvetica", size=8)
        self.cell(0, 5, "TLP:AMBER", align="L")
        self.cell(0, 5, "ACME Incident Response Plan", align="R", new_x="LMARGIN", new_y="NEXT")
        self.ln(4)

    def footer(self) -> None:
        self.set_y(-15)
        self.set_font("Helvetica", size=8)
        self.cell(0, 5, f"Page {self.page_no()} of {{nb}}", align="C")


def test_running_header_footer_label_and_page_numbers_are_removed(tmp_path: Path):
    pdf = _Paged(format="A4")
    pdf.set_margins(20, 15, 20)
    pdf.set_auto_page_break(auto=True, margin=20)
    pdf.add_page()
    for number in range(1, 5):
        write(pdf, f"Phase {number}", 16, "B")
        for _ in range(6):
            write(pdf, f"Phase {number} work. " + LOREM + " " + LOREM)
    assert pdf.page_no() >= 3
    doc = load(tmp_path, pdf)
    assert "TLP:AMBER" not in doc.text
    assert "ACME Incident Response Plan" not in doc.text
    assert "Page " not in doc.text
    assert [t for _, t in tree(doc)] == ["Phase 1", "Phase 2", "Phase 3", "Phase 4"]
    # a paragraph running over a page break is one paragraph, with no footer inside it
    assert not any(line.strip().isdigit() for line in doc.text.splitlines())


def test_schedule_rows_opening_every_page_are_text_and_a_header_table_is_not(tmp_path: Path):
    # a roster table runs over three pages: each page opens on a row that differs from the
    # others only in its date (folded, the same text at the same place), which is data; the
    # header drawn as a table with the page's number in a cell is a running header
    pdf = new_pdf()
    pdf.set_auto_page_break(auto=False)
    edges = [20.0, 60.0, 100.0, 190.0]
    for number in range(1, 4):
        pdf.add_page()
        pdf.set_font("Helvetica", size=8)
        _ruled_row(pdf, 8.0, edges, [["ACME IR Plan"], ["Rev 2"], [f"{number} / 3"]])
        pdf.set_font("Helvetica", size=10)
        top = 30.0
        for day in range(4):
            date = f"2026-05-{10 * number + day:02d}"
            top = _ruled_row(pdf, top, edges, [[date], ["09:00"], ["Duty manager on call"]])
        pdf.set_y(top + 5)
        write(pdf, LOREM)
    doc = load(tmp_path, pdf)
    lines = doc.text.splitlines()
    for number in range(1, 4):
        assert f"2026-05-{10 * number:02d} | 09:00 | Duty manager on call" in lines
    assert "ACME IR Plan" not in doc.text


def test_roman_page_numbers_in_the_margin_are_removed(tmp_path: Path):
    class Roman(FPDF):
        def footer(self) -> None:
            self.set_y(-15)
            self.set_font("Helvetica", size=9)
            self.cell(0, 5, ["i", "ii", "iii", "iv"][self.page_no() - 1], align="C")

    pdf = Roman(format="A4")
    pdf.set_margins(20, 20, 20)
    for number in range(3):
        pdf.add_page()
        write(pdf, f"Front matter page {number}. " + LOREM)
    doc = load(tmp_path, pdf)
    assert not any(line.strip() in {"i", "ii", "iii"} for line in doc.text.splitlines())


# --- lists, hyphenation, joining --------------------------------------------------------------


def test_bullet_glyphs_become_list_items(tmp_path: Path, font: Path):
    pdf = font_pdf(font)
    write(pdf, "Responders keep these items ready:", family="wb")
    for glyph, item in [
        (PUA_BULLET, "Spare laptops"),
        ("▪", "Write blockers"),
        ("•", "Evidence bags"),
        ("o", "Blank media"),
    ]:
        pdf.set_font("wb", size=11)
        pdf.cell(6, 6, glyph)
        pdf.cell(0, 6, item, new_x="LMARGIN", new_y="NEXT")
    doc = load(tmp_path, pdf)
    lines = doc.text.splitlines()
    for item in ["Spare laptops", "Write blockers", "Evidence bags", "Blank media"]:
        assert f"- {item}" in lines
    assert not any(0xE000 <= ord(ch) <= 0xF8FF for ch in doc.text)
    assert "▪" not in doc.text and "•" not in doc.text


def test_drawn_bullets_make_list_items_that_never_join(tmp_path: Path, font: Path):
    """A browser draws a list's bullets as small shapes (a filled disc, a ring), with no
    character for them: each line after one is an item, short as it is, and a wrapped item's
    next line still joins it. A dotted underline is no bullet."""
    pdf = font_pdf(font)
    write(pdf, "Before you shut the host down, try these:", family="wb")
    pdf.set_font("wb", size=11)
    items = [
        ("F", "Restore the default firewall rules"),
        ("F", "Kill the attacker's sessions"),
        ("D", "Lock out every other user"),
        ("F", "sudo shutdown now"),
    ]
    for style, item in items:
        y = pdf.get_y()
        pdf.circle(pdf.l_margin + 2, y + 2.2, 0.7, style=style)  # a disc, or a ring ("D")
        pdf.set_x(pdf.l_margin + 6)
        pdf.cell(0, 6, item, new_x="LMARGIN", new_y="NEXT")
    # a long item wrapped over two lines, after its disc
    y = pdf.get_y()
    pdf.circle(pdf.l_margin + 2, y + 2.2, 0.7, style="F")
    pdf.set_x(pdf.l_margin + 6)
    pdf.multi_cell(0, 6, LOREM, new_x="LMARGIN", new_y="NEXT")
    # a dotted underline under a short line: dots too small to be bullets
    pdf.cell(0, 6, "Last reviewed", new_x="LMARGIN", new_y="NEXT")
    for i in range(20):
        pdf.rect(pdf.l_margin + i * 1.0, pdf.get_y() - 1.2, 0.2, 0.2, style="F")
    pdf.cell(0, 6, "by the security team", new_x="LMARGIN", new_y="NEXT")
    doc = load(tmp_path, pdf)
    lines = doc.text.splitlines()
    for _, item in items:
        assert f"- {item}" in lines, doc.text
    assert f"- {LOREM}" in lines, doc.text
    assert not any(line.startswith("- Last") or line.startswith("- by") for line in lines)


def _justified(pdf: FPDF, lines: list[str], size: float = 11) -> None:
    """Lines broken where the test says, justified to the full width like a typeset page:
    each word is placed on its own, the blanks widened so that the line ends at the margin."""
    pdf.set_font("Helvetica", size=size)
    y = pdf.get_y() + size * 0.4
    for number, line in enumerate(lines):
        words = line.split(" ")
        widths = [pdf.get_string_width(word) for word in words]
        last = number == len(lines) - 1
        gap = pdf.get_string_width(" ")
        if not last and len(words) > 1:
            gap = (pdf.epw - sum(widths)) / (len(words) - 1)
        x = pdf.l_margin
        for word, width in zip(words, widths, strict=True):
            pdf.text(x, y, word)
            x += width + gap
        y += size * 0.5
    pdf.set_y(y)


def _justified_text(tmp_path: Path, lines: list[str]) -> str:
    """The text read from a page of ``lines`` broken and justified as given."""
    pdf = new_pdf()
    pdf.add_page()
    _justified(pdf, lines)
    return load(tmp_path, pdf).text


def test_hyphenated_words_are_rejoined_and_real_hyphens_kept(tmp_path: Path):
    text = _justified_text(
        tmp_path,
        [
            "The team writes a follow-up report after each review of the inci-",
            "dent, and the handlers agree on who owns each follow-",
            "up item. The checklist covers the network as well as pre-",
            "Windows systems and every service that the organization runs today.",
        ],
    )
    assert "review of the incident, and the handlers" in text
    assert "each follow-up item" in text
    assert "as well as pre-Windows systems" in text


def test_a_word_processor_s_hyphens_at_line_ends_are_real(tmp_path: Path):
    # Word, LibreOffice and browsers do not hyphenate: a hyphen at a line end belongs to the
    # word ("on-premises", a command's "describe-volumes", "denial-of-access"), even where the
    # document writes the compound only once
    text = _justified_text(
        tmp_path,
        [
            "Ransomware in a cloud account differs from the traditional kind on-",
            "premises: to list the disks of the host run the command aws ec2 describe-",
            "volumes first, then read the ransom note for the threat of a denial-",
            "of-access component and keep the volumes apart before you restore.",
        ],
    )
    assert "the traditional kind on-premises" in text
    assert "describe-volumes" in text and "a denial-of-access component" in text


def test_a_typeset_document_s_line_end_hyphens_are_rejoined(tmp_path: Path):
    # a document whose line-end hyphens mostly split words it writes whole elsewhere hyphenates
    # at line ends: there a hyphen the document gives no other evidence for is dropped too
    text = _justified_text(
        tmp_path,
        [
            "Each incident needs a response plan, and the organization keeps its inci-",
            "dent records for a year after it closes. The handlers write the re-",
            "sponse plan in good time, together with the people of the organi-",
            "zation, and they agree on who takes over the custody and the manage-",
            "ment of the evidence. Every incident, response and organization policy is read.",
        ],
    )
    assert "its incident records" in text and "the response plan" in text
    assert "of the organization, and they" in text and "the management of the evidence" in text


def test_english_lines_join_with_a_space_and_sentences_get_theirs(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Do not power off the host during an attack.Don't reboot it either. " + LOREM)
    write(pdf, "A short line.")
    write(pdf, "Another paragraph follows the short line.")
    doc = load(tmp_path, pdf)
    assert "attack. Don't reboot" in doc.text
    assert LOREM in doc.text  # the wrapped paragraph is one line again, words spaced
    assert "A short line.\nAnother paragraph" in doc.text


def test_lines_of_an_embedded_subset_font_join_by_its_own_widths(tmp_path: Path):
    # fpdf2 embeds a TrueType font as a subset with glyph ids for codes and a /ToUnicode map,
    # as Word, LibreOffice and Chromium do: a wide font's lines wrap early by half-an-em
    # estimates, so the widths must come from the font through that map
    pdf = new_pdf()
    pdf.add_font("wide", fname=str(make_font(tmp_path / "wide.ttf", latin_width=720)))
    pdf.add_page()
    write(pdf, LOREM, family="wide")
    write(pdf, "A short line.", family="wide")
    assert LOREM in load(tmp_path, pdf).text
    page = PdfReader(tmp_path / "doc.pdf").pages[0]
    (font,) = [f.get_object() for f in page["/Resources"]["/Font"].values()]
    assert font["/Subtype"] == "/Type0"  # glyph ids for codes, a /ToUnicode map to the text
    assert FontWidths().width(font, "Responders", 10) == pytest.approx(10 * 7.2)


def test_japanese_lines_join_without_a_space(tmp_path: Path, font: Path):
    pdf = font_pdf(font)
    write(pdf, "対応手順書", 18, family="wb")
    write(pdf, "1. 目的", 14, family="wb")
    pdf.set_font("wb", size=11)
    pdf.multi_cell(100, 6, JA_PARAGRAPH, new_x="LMARGIN", new_y="NEXT", wrapmode="CHAR")
    pdf.ln(4)
    write(pdf, "2. 連絡先", 14, family="wb")
    write(pdf, "Contact the SOC lead by phone. " + LOREM, family="wb")
    doc = load(tmp_path, pdf)
    assert JA_PARAGRAPH in doc.text
    assert sections(doc) == [(1, "1. 目的"), (1, "2. 連絡先")]
    assert doc.title == "対応手順書"
    assert section_of(doc, "揮発性の情報") == (doc.title, "1. 目的")
    assert "Contact the SOC lead by phone. " + LOREM in doc.text


def _lines_at(pdf: FPDF, lines: list[str], family: str, size: float = 11) -> None:
    """Each line set where given, a line pitch apart, as a word processor breaks them."""
    pdf.set_font(family, size=size)
    for text in lines:
        if not text:  # a paragraph break
            pdf.ln(size * 0.35)
            continue
        pdf.set_x(pdf.l_margin)
        pdf.cell(0, size * 0.45, text, new_x="LMARGIN", new_y="NEXT")


def test_a_japanese_line_broken_early_still_joins(tmp_path: Path, font: Path):
    # 20 characters fill a line. Word processors keep 「は、」 together (行頭禁則) and break up
    # to two characters early inside a sentence; a line ending a sentence two characters
    # early ends its paragraph; a number opening the next line after a Latin word at the edge
    # goes on a wrapped line ("Severity" / "1 の端末").
    pdf = font_pdf(font)
    _lines_at(
        pdf,
        [
            "初動対応では端末をネットワークから切り離",
            "す前に揮発性の情報を保全実施した時で",
            "は、経路をすべて残す。",
            "",
            "実施した操作と時刻をチケットに記録する前",
            "証拠の受け渡しは管理者の承認を得る。",
            "保管庫に入れるまでの経路をすべて残す。",
            "",
            "初動対応では端末を Priority 1 / Severity",
            "1 の端末をネットワークから切り離す。",
        ],
        "wb",
    )
    text = load(tmp_path, pdf).text
    assert "保全実施した時では、経路をすべて残す。" in text
    assert "承認を得る。\n保管庫に入れる" in text
    assert "Severity 1 の端末" in text


def test_a_line_opening_on_a_latin_word_before_japanese_is_no_wrapped_line(
    tmp_path: Path, font: Path
):
    # 20 characters fill a line. 「rootの経路…」 could have followed the short line before it
    # from "root" on: the line before ended its paragraph (a list item without a full stop).
    pdf = font_pdf(font)
    _lines_at(
        pdf,
        [
            "初動対応では端末をネットワークから切り離",
            "す前に揮発性の情報を保全する。",
            "",
            "初動対応では端末を切り離す",
            "rootの経路をすべて残す。",
        ],
        "wb",
    )
    text = load(tmp_path, pdf).text
    assert "初動対応では端末を切り離す\nrootの経路をすべて残す。" in text


def test_a_line_opening_on_japanese_glued_to_a_latin_run_is_a_wrapped_line(
    tmp_path: Path, font: Path
):
    # 20 characters fill a line. A word processor does not break between 「は、」 and the
    # address glued to it: the line before ended five characters early because the whole
    # 「は、https://…」 would not fit, not because its paragraph ended.
    pdf = font_pdf(font)
    _lines_at(
        pdf,
        [
            "初動対応では端末をネットワーク",
            "は、https://example.com/ir の経路を残す。",
        ],
        "wb",
    )
    text = load(tmp_path, pdf).text
    assert "初動対応では端末をネットワークは、https://example.com/ir の経路を残す。" in text


def test_a_wide_list_number_tabbed_close_to_its_item_is_still_an_item(tmp_path: Path):
    # a word processor tabs an item's text to the list's indent: after "10." less than a
    # space's width is left, and no space character is written
    pdf = new_pdf()
    pdf.add_page()
    pdf.set_font("Helvetica", size=10.5)
    long = "Determine the resources involved in serving the application, starting with the"
    y = 30.0
    for number, text in (("9.", long), ("", "load balancers."), ("10.", "Obtain the baseline.")):
        if number:
            pdf.text(20, y, number)
        pdf.text(20 + pdf.get_string_width("10.") + 0.45, y, text)
        y += 5.5
    doc = load(tmp_path, pdf)
    assert "10. Obtain the baseline." in doc.text.splitlines()


def test_kangxi_radicals_read_as_the_ideographs_they_stand_for(tmp_path: Path, font: Path):
    pdf = font_pdf(font)
    write(pdf, "対応\u2f3f順書", 18, family="wb")
    write(pdf, "1. \u2f6c的", 14, family="wb")
    write(pdf, JA_PARAGRAPH, family="wb")
    write(pdf, "\u2f6c的と範囲", 14, family="wb")  # no number: a heading by its size alone
    write(pdf, JA_PARAGRAPH, family="wb")
    write(pdf, f"{LONG_RADICAL}期間", 14, family="wb")
    write(pdf, JA_PARAGRAPH, family="wb")
    doc = load(tmp_path, pdf)
    assert doc.title == "対応手順書"
    assert sections(doc) == [(1, "1. 目的"), (1, "目的と範囲"), (1, "長期間")]


def test_code_in_a_smaller_monospaced_font_does_not_set_the_body_size(tmp_path: Path):
    # a runbook of scripts: more characters of code than of prose; short prose lines are not
    # "larger than the body"
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Backup", 16, "B")
    write(pdf, "Run the backup script before every deployment.")
    for n in range(40):
        write(
            pdf,
            f"sudo cp -r /etc/systemd/system/backup-{n}.service /mnt/backup/",
            8,
            family="Courier",
        )
    write(pdf, "Check the size of the archive")
    write(pdf, "Restore", 16, "B")
    write(pdf, "Copy the files back.")
    doc = load(tmp_path, pdf)
    assert tree(doc) == [(1, "Backup"), (1, "Restore")]


def test_a_bold_japanese_heading_may_open_on_a_lower_case_word(tmp_path: Path, font: Path):
    # 「cron対応手順」 in bold at the body size heads its section; a bold English line opening
    # in lower case is the wrapped end of a bold sentence
    pdf = font_pdf(font)
    pdf.add_font("wbb", fname=str(make_font(tmp_path / "bold.ttf", bold=True)))
    write(pdf, "対応手順書", 20, family="wb")
    write(pdf, "概要", 16, family="wb")
    write(pdf, JA_PARAGRAPH, family="wb")
    write(pdf, "cron対応手順", 11, family="wbb")
    write(pdf, JA_PARAGRAPH, family="wb")
    write(pdf, "and applications", 11, family="wbb")
    write(pdf, JA_PARAGRAPH, family="wb")
    doc = load(tmp_path, pdf)
    assert sections(doc) == [(1, "概要"), (2, "cron対応手順")]


def test_table_rows_stay_one_per_line(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Severity levels:")
    pdf.set_font("Helvetica", size=10)
    with pdf.table(col_widths=(30, 140), first_row_as_headings=False) as table:
        for row in [("Sev1", "Critical service down"), ("Sev2", "Single server compromised")]:
            cells = table.row()
            for cell in row:
                cells.cell(cell)
    doc = load(tmp_path, pdf)
    lines = doc.text.splitlines()
    assert any(ln.startswith("Sev1") and ln.endswith("Critical service down") for ln in lines)
    assert any(ln.startswith("Sev2") and ln.endswith("Single server compromised") for ln in lines)


def test_a_ruled_table_s_wrapped_cells_are_read_whole_one_row_a_line(tmp_path: Path, font: Path):
    # a word processor's table: cells wrap inside their columns, so the page's lines hold pieces
    # of several cells; the table's rules say where each cell is
    pdf = font_pdf(font)
    write(pdf, "対応手順書", family="wb")
    pdf.set_font("wb", size=10)
    rows = [
        ("項目", "対応"),
        ("A", "初動対応では、端末をネットワークから切り離す前に揮発性の情報を保全し"),
        ("B", "実施した操作と時刻をチケットに記録する。"),
    ]
    with pdf.table(col_widths=(20, 50), width=70, align="LEFT", first_row_as_headings=False) as t:
        for row in rows:
            cells = t.row()
            for cell in row:
                cells.cell(cell)
    pdf.ln(4)
    write(pdf, "Severity levels:")
    pdf.set_font("Helvetica", size=10)
    with pdf.table(col_widths=(25, 60), width=85, align="LEFT", first_row_as_headings=False) as t:
        for row in [
            ("Sev1", "Critical service down, customers cannot log in and payments fail"),
            ("Sev2", "One server compromised"),
        ]:
            cells = t.row()
            for cell in row:
                cells.cell(cell)
    doc = load(tmp_path, pdf)
    lines = doc.text.splitlines()
    assert "A | 初動対応では、端末をネットワークから切り離す前に揮発性の情報を保全し" in lines
    assert "B | 実施した操作と時刻をチケットに記録する。" in lines
    assert "Sev1 | Critical service down, customers cannot log in and payments fail" in lines
    assert "Sev2 | One server compromised" in lines


def _ruled_row(pdf: FPDF, top: float, edges: list[float], cells: list[list[str]]) -> float:
    """A table row drawn as a word processor does: each cell's lines inside its rules, one
    line pitch apart; returns where the row ends."""
    pitch = 5.0
    bottom = top + pitch * max(len(lines) for lines in cells) + 2
    for x in edges:
        pdf.line(x, top, x, bottom)
    pdf.line(edges[0], top, edges[-1], top)
    pdf.line(edges[0], bottom, edges[-1], bottom)
    for left, lines in zip(edges, cells, strict=False):
        for number, line in enumerate(lines):
            pdf.text(left + 1.5, top + 4.5 + pitch * number, line)
    return bottom


def _wrap(pdf: FPDF, text: str, width: float) -> list[str]:
    """``text`` broken into lines of at most ``width`` (mm), as a word processor wraps it."""
    lines: list[str] = []
    for word in text.split():
        if lines and pdf.get_string_width(lines[-1] + " " + word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def test_a_table_row_split_by_a_page_break_is_one_row(tmp_path: Path):
    # a word processor carries the rest of a tall row over to the next page; the next page's
    # part has an empty first cell, or the rest of a first cell cut inside its text. A new row
    # at the top of a page (its own label, in capitals) stays a row of its own.
    pdf = new_pdf()
    pdf.set_auto_page_break(auto=False)
    pdf.set_font("Helvetica", size=10)
    edges = [20.0, 62.0, 125.0, 185.0]
    criteria = (
        "Confirmed unauthorized API calls from compromised credentials, scope unclear, or "
        "credentials exposed publicly on a paste site"
    )
    wrapped = _wrap(pdf, criteria, 63 - 3)
    label = _wrap(pdf, "VPC Flow Logs (data transfer volumes)", 42 - 3)
    assert len(wrapped) >= 3 and len(label) == 2

    def page(rows: list[list[list[str]]], start: float) -> None:
        pdf.add_page()
        pdf.set_font("Helvetica", size=10)
        top = start
        for cells in rows:
            top = _ruled_row(pdf, top, edges, cells)

    header = [["Priority"], ["Criteria"], ["Owner"]]
    page([header, [["P2 - High"], wrapped[:2], ["IR lead"]]], 240.0)
    page([[[""], wrapped[2:], [""]], [[label[0]], ["Export"], ["S3"]]], 20.0)
    page(
        [[[label[1]], ["to CloudWatch"], [""]], [["Amazon GuardDuty"], ["Findings"], ["SOC"]]], 20.0
    )
    page([[["Amazon GuardDuty"], ["Alerts"], ["SOC"]]], 20.0)
    doc = load(tmp_path, pdf)
    lines = doc.text.splitlines()
    assert f"P2 - High | {criteria} | IR lead" in lines
    assert "VPC Flow Logs (data transfer volumes) | Export to CloudWatch | S3" in lines
    assert "Amazon GuardDuty | Findings | SOC" in lines
    assert "Amazon GuardDuty | Alerts | SOC" in lines


def test_a_table_drawn_cell_by_cell_as_closed_paths_is_read_by_its_cells(tmp_path: Path):
    # each cell's border one closed path (m l l l h S): the side that closes it is a rule too
    pdf = new_pdf()
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    rows = [("Sev1", ["Critical service down for", "all customers"]), ("Sev2", ["One host"])]
    top = 30.0
    for label, lines in rows:
        bottom = top + 5.0 * len(lines) + 2
        for left, right in ((20.0, 50.0), (50.0, 110.0)):
            pdf.polygon([(left, top), (right, top), (right, bottom), (left, bottom)], style="D")
        pdf.text(21.5, top + 4.5, label)
        for number, line in enumerate(lines):
            pdf.text(51.5, top + 4.5 + 5.0 * number, line)
        top = bottom
    doc = load(tmp_path, pdf)
    lines = doc.text.splitlines()
    assert "Sev1 | Critical service down for all customers" in lines
    assert "Sev2 | One host" in lines


def test_a_single_box_around_text_is_no_table(tmp_path: Path):
    # a note in a frame: two vertical rules, one column; its lines are a paragraph
    pdf = new_pdf()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(120, 5.5, "Note: " + LOREM, border=1, new_x="LMARGIN", new_y="NEXT")
    doc = load(tmp_path, pdf)
    assert " | " not in doc.text
    assert ("Note: " + LOREM) in doc.text.splitlines()


# --- two text columns --------------------------------------------------------------------------

_COLUMN_X = (20.0, 110.0)  # mm: two columns 80 mm wide, a 10 mm gutter between them
_COLUMN_WIDTH = 80.0
_PITCH_MM = 5.0


def _column_lines(pdf: FPDF, x: float, top: float, lines: list[tuple[str, float, str]]) -> None:
    """Lines set down one column as a word processor sets them: (text, indent in mm, style);
    an empty text is a paragraph's space after."""
    y = top
    for text, indent, style in lines:
        if text:
            pdf.set_font("Helvetica", style=style, size=13 if style else 10)
            pdf.text(x + indent, y, text)
        y += _PITCH_MM if text else 2.5


def _paragraph(pdf: FPDF, text: str, indent: float = 0.0) -> list[tuple[str, float, str]]:
    pdf.set_font("Helvetica", size=10)
    return [(line, indent, "") for line in _wrap(pdf, text, _COLUMN_WIDTH - indent)]


def test_a_page_in_two_columns_wraps_at_each_column_s_edge(tmp_path: Path):
    # a playbook set in two columns: the left column's lines end half way across the page, so a
    # paragraph of two lines there is still one paragraph; an item that the left column's foot
    # breaks goes on at the top of the right one; the list goes on there at its own level (its
    # indent measured from the column's edge), and an item set further in is nested
    pdf = new_pdf()
    pdf.set_auto_page_break(auto=False)
    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=18)
    pdf.text(20, 20, "Ransomware playbook")
    call = "Call the duty manager first, then the legal team, and write down the time of each call."
    broken = "Isolate every host that shows the ransom note from the network but keep it on"
    isolate = _paragraph(pdf, "- " + broken, 0.0)
    assert len(_paragraph(pdf, call)) == 2 and len(isolate) == 2
    left = [
        ("1. Contain", 0.0, "B"),
        *_paragraph(pdf, call),
        ("", 0.0, ""),
        *_paragraph(pdf, LOREM),
        ("", 0.0, ""),
        ("- Open a ticket for the incident", 0.0, ""),
        ("- Page the incident commander", 0.0, ""),
        isolate[0],
    ]
    recover = "Restore the hosts from the last clean backup once the scope is known and agreed."
    right = [
        isolate[1],
        ("- Keep the backups offline until the scope is known", 0.0, ""),
        ("- Ask the storage team which copies are clean", 6.0, ""),
        ("", 0.0, ""),
        ("2. Recover", 0.0, "B"),
        *_paragraph(pdf, recover),
        ("", 0.0, ""),
        *_paragraph(pdf, LOREM),
    ]
    _column_lines(pdf, _COLUMN_X[0], 32.0, left)
    _column_lines(pdf, _COLUMN_X[1], 32.0, right)
    doc = load(tmp_path, pdf)
    lines = doc.text.splitlines()
    assert call in lines
    assert recover in lines
    assert LOREM in lines
    assert "- " + broken in lines
    assert "- Keep the backups offline until the scope is known" in lines  # not nested
    assert "  - Ask the storage team which copies are clean" in lines
    assert sections(doc) == [(1, "1. Contain"), (1, "2. Recover")]


def test_a_table_row_a_column_s_foot_splits_is_one_row(tmp_path: Path):
    # a table in the left column of a page set in two columns: its last row goes on at the top
    # of the right column, its first cell empty there; the rows of the two columns' tables sit
    # at nearly the same heights and stay rows of their own tables
    pdf = new_pdf()
    pdf.set_auto_page_break(auto=False)
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    criteria = "Stale credential found with no evidence of use by anyone outside the team"
    wrapped = _wrap(pdf, criteria, 50 - 3)
    assert len(wrapped) >= 2
    left_edges = [20.0, 50.0, 100.0]
    right_edges = [110.0, 140.0, 190.0]
    top = 30.0
    prose = _paragraph(pdf, LOREM)
    _column_lines(pdf, _COLUMN_X[0], top, prose)
    top += _PITCH_MM * len(prose) + 2
    for label in ("P1", "P2", "P3"):
        top = _ruled_row(pdf, top, left_edges, [[label], [f"Severity {label} criteria"]])
    _ruled_row(pdf, top, left_edges, [["P4"], wrapped[:1]])
    right_top = _ruled_row(pdf, 30.3, right_edges, [[""], wrapped[1:]])
    for name in ("Lead", "Legal", "Owner"):
        right_top = _ruled_row(pdf, right_top, right_edges, [[name], [f"Contact the {name}"]])
    _column_lines(pdf, _COLUMN_X[1], right_top + 6, _paragraph(pdf, LOREM))
    doc = load(tmp_path, pdf)
    lines = doc.text.splitlines()
    assert f"P4 | {criteria}" in lines
    for label in ("P1", "P2", "P3"):
        assert f"{label} | Severity {label} criteria" in lines
    for name in ("Lead", "Legal", "Owner"):
        assert f"{name} | Contact the {name}" in lines


def _mm_below_top(pt: float) -> float:
    """The distance from the top of an A4 page, in mm, of the height ``pt`` (PDF points)."""
    return (841.89 - pt) * 25.4 / 72


def test_tables_side_by_side_keep_their_own_rows(tmp_path: Path):
    # two tables side by side, their row borders at nearly the same height (0.1 pt apart, one
    # either side of a rounding step): each border stays its own table's, and each row reads
    # as a row of its own
    pdf = new_pdf()
    pdf.set_auto_page_break(auto=False)
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    tables = {  # left edges of the columns; the height of the border between the two rows
        (20.0, 50.0, 100.0): (461.30, [("A", "Isolate the host"), ("B", "Capture memory")]),
        (110.0, 140.0, 190.0): (461.20, [("C", "Notify legal"), ("D", "Inform the regulator")]),
    }
    for edges, (middle_pt, rows) in tables.items():
        middle = _mm_below_top(middle_pt)
        levels = [middle - 12, middle, middle + 12]
        for x in edges:
            pdf.line(x, levels[0], x, levels[-1])
        for y in levels:
            pdf.line(edges[0], y, edges[-1], y)
        for top, cells in zip(levels, rows, strict=False):
            for x, text in zip(edges, cells, strict=False):
                pdf.text(x + 1.5, top + 7, text)
    lines = load(tmp_path, pdf).text.splitlines()
    for _, rows in tables.values():
        for label, text in rows:
            assert f"{label} | {text}" in lines, lines


def test_a_list_step_at_a_page_s_foot_and_the_next_page_s_head_is_text(tmp_path: Path):
    # the same step closing two lists, one at the foot of page 1 and one under the top margin
    # of page 2: the same text (but its number) in the margins of two pages, yet no running
    # line, which comes back in the same margin at the same place
    pdf = new_pdf()
    pdf.set_auto_page_break(auto=False)
    pdf.add_page()
    write(pdf, LOREM)
    pdf.set_y(pdf.h - 28)
    write(pdf, "13. When the call ends, start the after-incident steps.")
    pdf.add_page()
    write(pdf, "22. When the call ends, start the after-incident steps.")
    write(pdf, LOREM)
    pdf.add_page()
    write(pdf, LOREM)
    doc = load(tmp_path, pdf)
    assert "13. When the call ends, start the after-incident steps." in doc.text
    assert "22. When the call ends, start the after-incident steps." in doc.text


def test_code_set_one_statement_a_paragraph_keeps_its_lines(tmp_path: Path):
    # a word processor's code: each statement a paragraph (space after each, so the document's
    # most common gap is theirs), lengths alike; a statement too long for the line wraps a line
    # pitch apart, and an indented statement starts a line of its own
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, LOREM)
    write(pdf, LOREM)

    def statement(text: str) -> None:
        pdf.set_font("Courier", size=9)
        pdf.multi_cell(0, 4.2, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(3.5)

    for verb in ("enable", "start", "status"):
        for kind in ("daily", "weekly", "monthly", "yearly"):
            statement(f"sudo systemctl {verb} backup-{kind}.timer")
    write(pdf, "Then dump the database and reload the units.")
    long = (
        "docker exec immich_postgres pg_dump -U postgres immich > "
        '"$backup_dir/data/immich_db.sql" && gzip -9 "$backup_dir/data/immich_db.sql"'
    )
    for _ in range(4):
        statement(long)
    full = 'sudo cp "$backup_dir/system/daemon.json" "$backup_dir/system/x.json" /etc/docker/ || :'
    assert 80 <= len(full) <= 88  # up to the right margin: a wrapped line by its width alone
    statement(full)
    statement("    sudo systemctl daemon-reload")
    doc = load(tmp_path, pdf)
    lines = [ln.strip() for ln in doc.text.splitlines()]
    assert lines.count("sudo systemctl enable backup-daily.timer") == 1
    assert lines.count("sudo systemctl status backup-yearly.timer") == 1
    assert lines.count(long) == 4  # each wrapped statement is one line again
    assert full in lines and "sudo systemctl daemon-reload" in lines


_PT = 25.4 / 72  # mm


def test_code_paragraphs_smaller_than_the_body_keep_their_statements(tmp_path: Path):
    # 10.5 pt body lines 18 pt apart; 9 pt code, one statement a paragraph, 22 pt apart (no code
    # line wraps, so the code has no pitch of its own): within 1.3 times the body's pitch, yet
    # scaled to its size the gap is a paragraph's. A statement whose next one opens on a word too
    # long for the rest of the line is no wrapped line.
    pdf = new_pdf()
    pdf.add_page()
    for _ in range(3):
        pdf.set_font("Helvetica", size=10.5)
        pdf.multi_cell(0, 18 * _PT, LOREM, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(4)
    first = "kubectl get pods --all-namespaces --output=wide;"
    second = "receive-->vulnerability-->prioritization-->report;"
    pdf.set_font("Courier", size=9)
    assert pdf.get_string_width(first + " " + second) > pdf.epw  # the next word would not fit
    for text in (first, second, first, second):
        pdf.cell(0, 22 * _PT, text, new_x="LMARGIN", new_y="NEXT")
    lines = load(tmp_path, pdf).text.splitlines()
    assert lines.count(first) == 2 and lines.count(second) == 2, lines


def test_body_lines_in_a_runbook_mostly_of_code_still_join(tmp_path: Path):
    # a runbook mostly of 9 pt code 12 pt apart: the document's most common gap is the code's,
    # and its 10.5 pt body lines, 17.4 pt apart, are still the lines of one paragraph
    pdf = new_pdf()
    pdf.add_page()
    pdf.set_font("Helvetica", size=10.5)
    pdf.multi_cell(0, 17.4 * _PT, LOREM, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)
    pdf.set_font("Courier", size=9)
    for number in range(40):
        pdf.cell(
            0,
            12 * _PT,
            f"sudo systemctl restart worker-{number}.service",
            new_x="LMARGIN",
            new_y="NEXT",
        )
    assert LOREM in load(tmp_path, pdf).text.splitlines()


def test_a_bar_the_text_writes_is_no_cell_and_text_drawings_keep_their_lines(tmp_path: Path):
    # "|" written in the text (a list of related playbooks, a shell's pipe) is no table cell:
    # the wrapped line joins; a table set without rules (cells apart by wide gaps) keeps a row a
    # line; the lines of an ASCII table in code keep theirs, however long the next one is
    pdf = new_pdf()
    pdf.add_page()
    related = (
        "Related playbooks: IRP-CredentialCompromise | IRP-DataAccess | IRP-PersonalDataBreach"
        " | IRP-InsiderThreat | IRP-Ransomware | IRP-DenialOfService | IRP-Phishing"
    )
    write(pdf, related)
    pipeline = (
        "docker images --format 'table {{.Repository}}:{{.Tag}}' | grep -E '(immich|jellyfin)'"
        " | sort | uniq >> backup_info.txt"
    )
    pdf.set_font("Courier", size=9)
    pdf.multi_cell(0, 4.2, pipeline, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)
    for label, text in (("Sev1", "Critical service down"), ("Sev2", "One host compromised")):
        pdf.set_font("Helvetica", size=10)
        y = pdf.get_y() + 4
        pdf.text(20, y, label)
        pdf.text(60, y, text)
        pdf.set_y(y + 1.5)
    pdf.ln(4)
    border = "+" + "-" * 22 + "+" + "-" * 22 + "+"
    art = [border, "| HASH                 | TOTAL SIZE           |", border]
    pdf.set_font("Courier", size=9)
    assert pdf.get_string_width(art[1] + " " + border) > pdf.epw
    for line in art:
        pdf.cell(0, 4.2, line, new_x="LMARGIN", new_y="NEXT")
    lines = [ln.strip() for ln in load(tmp_path, pdf).text.splitlines()]
    assert related in lines
    assert pipeline in lines
    assert "Sev1 | Critical service down" in lines and "Sev2 | One host compromised" in lines
    assert lines.count(border) == 2 and "| HASH | TOTAL SIZE |" in lines


def test_code_lines_of_one_block_keep_their_lines(tmp_path: Path):
    # a block of code set line by line a pitch apart (a browser's <pre>): statements of alike
    # length are no narrow box that wraps, and an indented line never continues the one before
    full = 'sudo cp "$backup_dir/system/daemon.json" "$backup_dir/system/x.json" /etc/docker/ || :'
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, LOREM)
    block = [f"sudo systemctl enable backup-{kind}.timer" for kind in ("daily", "weekly", "yearly")]
    for lines in (block, [full, "    sudo systemctl daemon-reload", "fi"]):
        pdf.set_font("Courier", size=9)
        for text in lines:
            pdf.cell(0, 4.2, text, new_x="LMARGIN", new_y="NEXT")
        write(pdf, LOREM)
    doc = load(tmp_path, pdf)
    lines = doc.text.splitlines()
    assert all(text in lines for text in block)
    assert full in lines and "sudo systemctl daemon-reload" in lines


def _raw_pdf(lines: list[bytes]) -> bytes:
    """A one-page PDF written by hand (Helvetica, one ``Tj`` per line), for text fpdf2 would not
    write: here, a NUL before every character, as some fonts' two-byte codes come out of pypdf."""
    content = b"BT /F1 11 Tf 14 TL 72 740 Td " + b" ".join(b"(" + ln + b") Tj T*" for ln in lines)
    content += b" ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return out


def test_control_characters_in_the_text_do_not_hide_contents_or_bullets(tmp_path: Path):
    """pypdf gives some fonts' text as "\\x00C\\x00o\\x00n…": the NULs are dropped before the
    contents entries and bullets are looked for."""

    def spaced(text: str) -> bytes:
        return b"".join(b"\\000" + bytes([c]) for c in text.encode("cp1252"))

    lines = ["Contents", "Introduction ........ 3", "Containment ........ 4"]
    lines += [
        "Recovery ........ 5",
        "Introduction",
        "\u2022 Isolate the host.",
        "\u2022 Wipe nothing.",
    ]
    path = tmp_path / "nul.pdf"
    path.write_bytes(_raw_pdf([spaced(line) for line in lines]))
    doc, _ = load_file(path, tmp_path, 10_000_000)
    assert "\x00" not in doc.text
    assert "........" not in doc.text and "Recovery" not in doc.text
    assert doc.text.splitlines()[-2:] == ["- Isolate the host.", "- Wipe nothing."]


# --- bad input and the shipped Japanese samples -----------------------------------------------


def test_pdf_without_text_is_refused_in_japanese(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    pdf.set_fill_color(200, 200, 200)
    pdf.rect(20, 20, 170, 250, style="F")  # what a scanned page looks like to a text reader
    path = tmp_path / "scan.pdf"
    pdf.output(str(path))
    with pytest.raises(SourceFileError) as info:
        load_file(path, tmp_path, 10_000_000)
    assert "scan.pdf" in info.value.user_message
    assert "テキストを抽出できませんでした" in info.value.user_message


@pytest.mark.parametrize("name", ["pdf-incident-triage.pdf", "pdf-cloud-account-compromise.pdf"])
def test_sample_pdfs_keep_their_numbered_headings(name: str):
    doc, _ = load_file(SAMPLE_RUNBOOKS / name, SAMPLE_RUNBOOKS, 10_000_000)
    levels = dict(sections(doc))  # under the title, which heads the document
    titles = [t for _, t in sections(doc)]
    assert "1. 目的" in titles and "6. 注意事項" in titles
    assert all(t[0].isdigit() for t in titles)  # the metadata line is no heading
    for level, title in sections(doc):
        assert level == title.split(" ")[0].rstrip(".").count(".") + 1, title
    assert levels
    assert not doc.text.startswith("1.")  # the title line stays before the first heading


class _VisitedPage:
    """A page whose text pypdf's visitor reports as ``runs``: (text, x, y); the text matrix of
    every string is (1, 0, 0, 1, x, y), as pypdf gives it (one ``TJ`` array's strings all at
    the array's start)."""

    def __init__(self, runs: list[tuple[str, float, float]]) -> None:
        self.runs = runs

    def extract_text(self, visitor_text, visitor_operand_before=None) -> str:
        # a composite font without a /ToUnicode map: widths are estimated, 1 em per ideograph
        font = {"/Subtype": "/Type0", "/BaseFont": "/NotoSansCJKjp-Regular"}
        for text, x, y in self.runs:
            visitor_text(text, [1, 0, 0, 1, 0, 0], [1, 0, 0, 1, x, y], font, 12)
        return ""


def test_strings_of_one_array_reported_at_its_start_follow_each_other():
    """Chromium prints Japanese in TJ arrays that pypdf reports at the array's start: 確, な, 行
    and 動 all at x=112, then を at its real place four characters on. That is no gap: no cell
    separator, no space; and a Kangxi radical (⾮ for 非) joins its neighbours as an ideograph."""
    from core.ingest.pdf_lines import page_lines

    page = _VisitedPage(
        [
            ("攻撃者が行った正", 4.0, 700.0),
            ("確", 100.0, 700.0),
            ("な", 100.0, 700.0),
            ("行", 100.0, 700.0),
            ("動", 100.0, 700.0),
            ("を", 148.0, 700.0),
            ("特定してください。", 160.0, 700.0),
            ("名指しで", 4.0, 680.0),
            ("\u2fae", 52.0, 680.0),
            ("難", 76.0, 680.0),
            ("しないでください。", 88.0, 680.0),
        ]
    )
    lines = page_lines(page, 1, FontWidths())
    assert [line.text for line in lines] == [
        "攻撃者が行った正確な行動を特定してください。",
        "名指しで非難しないでください。",
    ]
    assert is_cjk("\u2fae")


def _chromium_pdf(tmp_path: Path, body: str, title: str = "IR") -> Path:
    """``body`` as a page printed to PDF by Chromium (header and footer on)."""
    import shutil
    import subprocess

    from tests.browser.conftest import CHROMIUM

    if shutil.which(CHROMIUM) is None:
        pytest.skip("Chromium is installed by make test (browser-deps)")
    page = tmp_path / "page.html"
    page.write_text(
        f"<html><head><meta charset='utf-8'><title>{title}</title></head><body>{body}</body></html>",
        encoding="utf-8",
    )
    pdf = tmp_path / "page.pdf"
    subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--print-to-pdf={pdf}",
         page.as_uri()],
        check=True,
        capture_output=True,
        timeout=120,
    )  # fmt: skip
    return pdf


def test_a_japanese_page_printed_by_chromium_reads_as_its_sentences(tmp_path: Path):
    """A wiki page saved as PDF from the browser (Chromium, Noto CJK, its header and footer on):
    sentences come back whole, without cell separators or spaces inside words, its headings are
    found by their size, and the print stamp of its one page is no text."""
    body = (
        "<h1>セキュリティインシデント対応</h1>"
        "<h2>攻撃のタイムラインの特定</h2>"
        "<p>利用可能なすべてのツールを使用して、攻撃のタイムラインと攻撃者が行った正確な行動を"
        "特定してください。攻撃開始前に攻撃者が行った偵察の痕跡も、ログファイルや時系列グラフの"
        "フォレンジック分析を使用して特定を試みてください。</p>"
        "<h2>外部コミュニケーション</h2>"
        "<p>侵害の原因となった可能性のある外部関係者を名指しで非難しないでください。"
        "システムが安全な状態にあり、十分なモニタリングが行われていると確信してから公表します。</p>"
    )
    pdf = _chromium_pdf(tmp_path, body)
    doc, _ = load_file(pdf, tmp_path, 10_000_000)
    text = doc.text.replace("\n", "")
    for sentence in (
        "攻撃者が行った正確な行動を特定してください。",
        "フォレンジック分析を使用して特定を試みてください。",
        "外部関係者を名指しで非難しないでください。",
        "十分なモニタリングが行われていると確信してから公表します。",
    ):
        assert sentence in text, doc.text
    # the browser's stamp on a page of its own: the date and time by the title, the address by
    # the page counter
    assert " | " not in doc.text and "file://" not in doc.text and ":" not in doc.text, doc.text
    assert [h.title for h in doc.headings or ()][-2:] == [
        "攻撃のタイムラインの特定",
        "外部コミュニケーション",
    ]


def test_a_list_printed_by_chromium_keeps_its_items_and_their_nesting(tmp_path: Path):
    """Chromium draws a list's bullets (disc, and a ring for a nested list): no character says
    where an item starts, and short Japanese items ending without a full stop were read as one
    line (「…kill -9 するrootパスワードを変更し…」). A nested list is set further right."""
    items = [
        "攻撃者と思われるアクティブなセッションを kill -9 する",
        "rootパスワードを変更し、他のすべてのユーザーをロックアウトする",
        "sudo shutdown now",
    ]
    # the last item is a command, set in a code font
    nested = (
        "".join(f"<li>{item}</li>" for item in items[:-1]) + f"<li><code>{items[-1]}</code></li>"
    )
    body = (
        "<h2>攻撃の緩和</h2><p>試すべき一般的な方法は以下のとおりです：</p>"
        "<ul><li>プロバイダーコンソールからインスタンスをシャットダウンします</li>"
        f"<li>ボックスにログインしている場合は、以下を試してください：<ul>{nested}</ul></li></ul>"
    )
    doc, _ = load_file(_chromium_pdf(tmp_path, body), tmp_path, 10_000_000)
    # (a space between "root" and 「パスワード」 or not is the fonts' business); the nested
    # items are indented under theirs, as Markdown nests them
    lines = [
        line[: len(line) - len(line.lstrip())] + "".join(line.split())
        for line in doc.text.splitlines()
    ]
    assert "-プロバイダーコンソールからインスタンスをシャットダウンします" in lines, doc.text
    for item in items:
        assert "  -" + "".join(item.split()) in lines, doc.text


def test_a_table_printed_by_chromium_reads_one_row_a_line_with_its_cells_whole(tmp_path: Path):
    """A wiki table with borders, its cells wrapped inside narrow columns: each row is one line
    of whole cells; a line break inside a cell (``<br>``) is kept apart by a space."""
    rows = [
        ("区分", "定義"),
        ("A", "金融データ、顧客情報、特許性を有する製品や技術情報を取り扱うシステム"),
        (
            "緊急",
            "リリース前の場合は、リリースまでに必ず修正すること<br>運用中の場合は、即時対応する",
        ),
        ("Sev1", "Critical service down for all customers in every region"),
    ]
    cells = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    body = (
        "<style>table{border-collapse:collapse;width:22em}td{border:1px solid #999;"
        "padding:.3em .6em}</style><h2>判断基準</h2><p>区分は次の表で判断します。</p>"
        f"<table>{cells}</table><p>表にない場合は統括室が判断します。</p>"
    )
    doc, _ = load_file(_chromium_pdf(tmp_path, body), tmp_path, 10_000_000)
    lines = doc.text.splitlines()
    assert "A | 金融データ、顧客情報、特許性を有する製品や技術情報を取り扱うシステム" in lines
    assert (
        "緊急 | リリース前の場合は、リリースまでに必ず修正すること 運用中の場合は、即時対応する"
        in lines
    )
    assert "Sev1 | Critical service down for all customers in every region" in lines
    assert "表にない場合は統括室が判断します。" in lines


def test_a_table_row_a_browser_print_cuts_at_a_page_break_is_one_row(tmp_path: Path):
    """Chromium splits a tall row at the page break and draws no border there: the columns'
    rules run on to the edge of the page's text, and the row goes on on the next page."""
    criteria = " ".join(
        ["Confirmed unauthorized API calls from compromised credentials, scope unclear."] * 6
    )
    body = (
        "<style>table{border-collapse:collapse;width:30em}td{border:1px solid #999;"
        "padding:.3em .6em}</style><div style='height:21cm'>Severity levels follow.</div>"
        f"<table><tr><td>Priority</td><td>Criteria</td></tr><tr><td>P2 high</td>"
        f"<td>{criteria}</td></tr><tr><td>P3</td><td>Anomalous access.</td></tr></table>"
        "<p>After the table.</p>"
    )
    pdf = _chromium_pdf(tmp_path, body)
    assert len(PdfReader(pdf).pages) == 2  # the row is cut by the page break
    doc, _ = load_file(pdf, tmp_path, 10_000_000)
    lines = doc.text.splitlines()
    assert f"P2 high | {criteria}" in lines
    assert "P3 | Anomalous access." in lines


def test_a_callout_s_bold_title_printed_by_chromium_is_no_heading(tmp_path: Path):
    """A wiki callout (a quote box set in from the text's edge) opens on a bold line at the body
    size, as an h4 heading does; set in, it is the callout's title, not a section."""
    body = (
        "<style>body{font-family:'Noto Sans CJK JP'}blockquote{border-left:3px solid #48c;"
        "margin-left:0;padding-left:1em}</style>"
        f"<h2>インシデント対応中</h2><p>{JA_PARAGRAPH}</p>"
        "<blockquote><p><strong>セキュリティインシデント？</strong></p>"
        "<p>セキュリティインシデントの場合は別の手順に従ってください。</p></blockquote>"
        f"<h4>インシデントコマンダーの手順</h4><p>{JA_PARAGRAPH}</p>"
        f"<h4>書記の手順</h4><p>{JA_PARAGRAPH}</p>"
    )
    doc, _ = load_file(_chromium_pdf(tmp_path, body), tmp_path, 10_000_000)
    titles = [t for _, t in tree(doc)]
    assert "インシデントコマンダーの手順" in titles and "書記の手順" in titles, titles
    assert not any("セキュリティインシデント" in t for t in titles), titles
    assert "セキュリティインシデント?" in doc.text or "セキュリティインシデント？" in doc.text


def test_a_wiki_page_printed_by_chromium_keeps_its_title_headings_and_middle_dots(tmp_path: Path):
    """Chromium embeds Noto CJK as Type 3 fonts, named only in their descriptors: an h4 (bold, in
    the body's size) is a heading by that weight. A bold phrase wrapped over whole lines of a
    list item is none, nor is a bold list item. The title is the page's, not "page - site"; 「・」 reads as itself."""
    strong = (
        "注意: 通常の連絡手段が使えない場合は、"
        + "代替の連絡手段として登録済みの携帯電話番号に連絡してください。" * 4
    )
    body = (
        "<h1>セキュリティオペレーションのオンコールガイド</h1>"
        "<h2>SIRTのオンコール</h2><h3>週末</h3>"
        "<h4>週末オンコールの責任</h4>"
        "<p>週末の担当者はフォロー・ザ・サンのモデルでアラートを承認し、トリアージします。</p>"
        "<h4>週末オンコールの代休</h4>"
        "<p>週末に担当した日数分の代休を取得できます。</p>"
        "<h2>落ち着いて!</h2><ul><li><strong>会議にコマンダーがいませんか?</strong></li>"
        "<li>Slackで呼び出します。</li></ul>"
        "<h2>SIRTのページング</h2><h3>マネージャー</h3>"
        f"<ul><li>エンジニアに連絡してページを承認するよう試みる。<strong>{strong}</strong></li>"
        "<li>応答しない場合は、他のエンジニアに引き継ぐ。</li></ul>"
    )
    # the wiki's style sheet sets a Japanese font that has a bold face (fonts-noto-cjk)
    style = "<style>body{font-family:'Noto Sans CJK JP',sans-serif}</style>"
    title = "セキュリティオペレーションのオンコールガイド - 社内Wiki"
    pdf = _chromium_pdf(tmp_path, style + body, title=title)
    doc, _ = load_file(pdf, tmp_path, 10_000_000)
    assert doc.title == "セキュリティオペレーションのオンコールガイド"
    assert ["".join(h.title.split()) for h in doc.headings or ()] == [
        "セキュリティオペレーションのオンコールガイド",  # the page's title heads it
        "SIRTのオンコール",
        "週末",
        "週末オンコールの責任",
        "週末オンコールの代休",
        "落ち着いて!",  # an exclamation set large is a heading; a bold list item is none
        "SIRTのページング",
        "マネージャー",
    ], doc.text
    assert [h.level for h in doc.headings or ()] == [1, 2, 3, 4, 4, 2, 2, 3]
    assert "- 会議にコマンダーがいませんか?" in doc.text.splitlines()
    assert "フォロー・ザ・サン" in doc.text
    assert "代替の連絡手段" in doc.text and "\u2027" not in doc.text


@pytest.mark.parametrize(
    ("meta", "shown", "title"),
    [
        ("Backup procedure - Team wiki", "Backup procedure", "Backup procedure"),
        ("社内Wiki｜バックアップ手順", "バックアップ手順", "バックアップ手順"),
        ("Microsoft Word - 手順書.docx", "インシデント対応手順書", "インシデント対応手順書"),
        # a title wrapped over two lines of which the page shows the first: /Title is whole
        ("Remediating a leaked secret in your repository", "Remediating a leaked secret in your",
         "Remediating a leaked secret in your repository"),
        ("Incident Handling Guide", "", "Incident Handling Guide"),
        ("", "Incident Handling Guide", "Incident Handling Guide"),
    ],
)  # fmt: skip
def test_the_title_is_the_page_s_when_the_pdf_title_adds_a_site_or_a_file_name(
    meta: str, shown: str, title: str
):
    from core.ingest.pdf import _title

    assert _title(meta, shown) == title


def test_a_footnote_address_stays_and_a_print_stamp_goes(tmp_path: Path):
    """An address alone at the foot of a page is a footnote; a date and time, or an address
    beside the page counter, is the browser's print stamp, dropped even on a one-page PDF."""

    class Printed(FPDF):
        def header(self) -> None:
            self.set_font("Helvetica", size=8)
            self.set_xy(10, 6)
            self.cell(60, 4, "2026/11/26 13:14")
            self.set_x(120)
            self.cell(60, 4, "Phishing runbook", new_x="LMARGIN", new_y="NEXT")
            self.set_y(30)

        def footer(self) -> None:
            self.set_font("Helvetica", size=8)
            self.set_xy(10, -20)
            self.cell(0, 4, "1 Reporting form: https://forms.example.org/phish", new_y="NEXT")
            self.set_xy(10, -10)
            self.cell(100, 4, "https://wiki.example.org/ir/phishing")
            self.set_x(180)
            self.cell(20, 4, "1/1")

    pdf = Printed(format="A4")
    pdf.add_page()
    write(pdf, "Phishing", 16, "B")
    write(pdf, LOREM)
    text = load(tmp_path, pdf).text
    assert "Reporting form: https://forms.example.org/phish" in text
    assert "2026/11/26" not in text and "wiki.example.org" not in text, text


def test_a_mermaid_diagram_printed_as_code_reads_as_its_edges(tmp_path: Path):
    # a playbook page printed with its ```mermaid block unrendered: the source in a code font
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Phishing Response", 18, "B")
    write(pdf, "Flow", 14, "B")
    for line in [
        "graph LR",
        '    Report["Report"] --> Analyze["Analyze"]',
        "    Analyze -->|Malicious| Contain[Contain]",
        "    style Report fill:#e74c3c,color:#fff",
    ]:
        write(pdf, line, 9, family="Courier")
    write(pdf, "Analysts confirm the report before containment.")
    doc = load(tmp_path, pdf)
    assert "- Report → Analyze\n- Analyze →[Malicious] Contain" in doc.text
    assert "fill:#e74c3c" not in doc.text and "graph LR" not in doc.text
    assert "Analysts confirm the report before containment." in doc.text


def test_a_page_mostly_of_a_smaller_table_keeps_its_paragraphs_as_text(tmp_path: Path):
    """A severity matrix: most of the characters are a ruled table's, set smaller than the
    paragraphs. The body's size is the paragraphs', not the table's: a paragraph's first lines
    are no heading, and the heading above it heads all of it."""
    pdf = new_pdf()
    pdf.add_page()
    write(pdf, "Severity Matrix", size=20, style="B")
    write(pdf, "Severity", size=15, style="B")
    paragraph = (
        "The severity label is used to indicate the actual or potential impact and helps "
        "determine the priority of the incident, and it should remain the highest level "
        "assessed once triage has been done by the responders on call"
    )
    write(pdf, paragraph + ".", size=10.5)
    pdf.set_font("Helvetica", size=9.5)
    with pdf.table(col_widths=(25, 145), first_row_as_headings=False) as table:
        for number in range(1, 13):
            cells = table.row()
            cells.cell(f"S{number}")
            cells.cell(
                f"Impact level {number}: customer data exposed, services degraded for a "
                "large share of users, and the issue is exploitable without authentication"
            )
    write(pdf, "Exceptions", size=15, style="B")
    write(pdf, "Exceptions to this procedure are tracked as policy exceptions.", size=10.5)
    doc = load(tmp_path, pdf)
    assert sections(doc) == [(1, "Severity"), (1, "Exceptions")]
    assert paragraph.split(",")[0] in doc.text
