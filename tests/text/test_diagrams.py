"""Mermaid diagrams read as their edges and messages (core.text.diagrams)."""

from __future__ import annotations

import time

from core.ingest.html import read_html
from core.ingest.markdown import read_markdown
from core.text.diagrams import read_mermaid

FLOW = """flowchart TD
    %% a comment
    Start[" 📩 User Reports / Gateway Alert"] --> Header{Header suspicious?}
    Header -->|Yes| Clicked{User clicked?}
    Header -- No --> Close([Close as FP])
    Clicked -->|No| Purge[" 🛡 Block & Purge Only"]
    Purge --> Notify & Ticket
    subgraph Phase1 [Containment]
    Isolate((Isolate host)) -.-> Report>Notify CISO]
    end
    style Start fill:#e74c3c,color:#fff
    classDef red fill:#f00
    click Start "https://example.com"
"""

SEQUENCE = """sequenceDiagram
    participant SOC
    participant Mail as Mail Gateway
    SOC->>Mail: Pull email headers + body
    Mail-->>SOC: Raw email
    Note over SOC: Check SPF and DKIM
    alt Malicious
        SOC-xMail: Purge from all mailboxes
    end
"""


def test_a_flowchart_is_read_as_its_edges_with_the_nodes_labels():
    assert read_mermaid(FLOW.splitlines()) == [
        "📩 User Reports / Gateway Alert → Header suspicious?",
        "Header suspicious? →[Yes] User clicked?",
        "Header suspicious? →[No] Close as FP",
        "User clicked? →[No] 🛡 Block & Purge Only",
        "🛡 Block & Purge Only → Notify & Ticket",
        "Containment",
        "Isolate host → Notify CISO",
    ]


def test_a_sequence_diagram_is_read_as_its_messages_notes_and_blocks():
    assert read_mermaid(SEQUENCE.splitlines()) == [
        "SOC → Mail Gateway: Pull email headers + body",
        "Mail Gateway → SOC: Raw email",
        "Check SPF and DKIM",
        "Malicious",
        "SOC → Mail Gateway: Purge from all mailboxes",
    ]


def test_other_diagrams_and_code_are_kept_as_written():
    assert read_mermaid(["gantt", "    title Recovery plan"]) is None
    assert read_mermaid(["Get-Process | Stop-Process"]) is None
    assert read_mermaid(["graph LR", "    A[Detect] --> "]) is None  # does not parse
    assert read_mermaid([]) is None
    # code that only opens on the word
    assert read_mermaid(["graph = nx.Graph()", "graph.add_edge(a, b)"]) is None
    # a hostile line is read as written, at once
    started = time.perf_counter()
    assert read_mermaid(["graph TD", "A" + "-" * 200_000]) is None
    assert read_mermaid(["sequenceDiagram", "A" + " " * 200_000 + "-"]) is None
    assert time.perf_counter() - started < 1.0


def test_a_fenced_mermaid_block_of_a_markdown_runbook_is_read_as_list_items():
    source = f"# Phishing\n\n## Flow\n\n```mermaid\n{FLOW}```\n\nAfter the flow.\n\n```mermaid\ngantt\n    title Plan\n```\n"
    text = read_markdown(source, "x.md").text
    assert "- Header suspicious? →[Yes] User clicked?" in text
    assert "fill:#e74c3c" not in text and "```mermaid\nflowchart" not in text
    assert "After the flow." in text
    assert "```mermaid\ngantt" in text  # kept as written


def test_a_mermaid_pre_block_of_a_page_is_read_as_list_items():
    page = f'<html><body><h1>Flow</h1><pre class="mermaid">{SEQUENCE}</pre></body></html>'
    text = read_html(page.encode(), "a.html", "a.html").text
    assert "- SOC → Mail Gateway: Pull email headers + body" in text
    assert "participant" not in text
