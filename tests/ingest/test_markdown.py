"""Markdown as MkDocs / Material sites publish it: front matter, admonitions, HTML, links, lists."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from core.ingest.loaders import load_file
from core.ingest.markdown import read_markdown
from core.text.chunking import chunk_document, split_sections

MKDOCS_PAGE = """---
title: ランサムウェア初動手順
description: 初動の進め方をまとめたページ
tags: [ir, ransomware]
---
<div id="reviewed-dates">
  <span><strong>最終レビュー日:</strong> <abbr title="内部メモ">2025-01-01</abbr></span>
</div>

!!! warning "電源を切らない"
    感染端末の電源は切らずに、ネットワークから隔離する。
    メモリ上の証跡が失われるため。

??? note
    連絡は SOC 当番へ。

<!-- 編集メモ: 社外秘の下書き
複数行のコメント -->

## 手順
各手順は順に実施する。

1. EDR で端末を隔離する。
1. 責任者に報告する。
    1. 電話で第一報を入れる。
    1. チャットで詳細を共有する。
1. ログを保全する。

![ネットワーク構成図](../assets/img/diagram.png)

詳細は [エスカレーション手順](../during/escalation.md){:target="_blank" } と [連絡先][contacts] を参照。<br/>ポータル <https://portal.example.jp> も見る。

[contacts]: ../contacts.md "連絡先一覧"

| 重大度 | 期限 |
|-|-|
| 高 | 30分 |

```
grep "[link](x)" <b>log</b>
```

## 復旧
バックアップから復元する。
"""


def _lines(text: str) -> list[str]:
    return text.split("\n")


@pytest.fixture
def page(tmp_path: Path):
    path = tmp_path / "during_ransomware.md"
    path.write_text(MKDOCS_PAGE, encoding="utf-8")
    doc, _ = load_file(path, tmp_path, 1_000_000)
    return doc


def test_front_matter_title_is_the_title_and_not_body_text(page):
    assert page.title == "ランサムウェア初動手順"
    assert not page.text.startswith("---")
    for meta in ("description", "初動の進め方", "ransomware", "tags"):
        assert meta not in page.text


def test_admonitions_become_a_lead_line_and_unindented_body(page):
    lines = _lines(page.text)
    lead = lines.index("注意: 電源を切らない")
    assert lines[lead + 1] == "感染端末の電源は切らずに、ネットワークから隔離する。"
    assert lines[lead + 2] == "メモリ上の証跡が失われるため。"
    note = lines.index("メモ")
    assert lines[note + 1] == "連絡は SOC 当番へ。"
    assert not any(line.startswith(("!!!", "???")) for line in lines)


def test_html_is_reduced_to_text_and_comments_dropped(page):
    assert "最終レビュー日: 2025-01-01" in page.text
    for markup in ("<div", "<span", "<strong", "<abbr", "内部メモ", "<br", "<!--"):
        assert markup not in page.text.replace('grep "[link](x)" <b>log</b>', "")
    assert "編集メモ" not in page.text and "複数行のコメント" not in page.text


def test_template_statements_on_their_own_line_are_dropped():
    source = (
        "## Failover\n\n"
        "1. Put the primary in maintenance mode.\n\n"
        "   {% note %}\n\n"
        "   **Note:** wait until replication finishes.\n\n"
        "   {% endnote %}\n"
        "{%- if ghes %} {{< note >}} {%- endif %}\n"
        "2. Promote the replica with `{% raw %}ghe-repl-promote{% endraw %}`.\n"
        "```\n{% note %}\n```\n"
    )
    text = read_markdown(source, "x.md").text
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    assert lines == [
        "## Failover",
        "1. Put the primary in maintenance mode.",
        "**Note:** wait until replication finishes.",
        "2. Promote the replica with `{% raw %}ghe-repl-promote{% endraw %}`.",
        "```",
        "{% note %}",  # code is kept verbatim
        "```",
    ]


def test_template_markup_inline_reads_as_the_published_page_shows_it():
    """Liquid (Jekyll, GitHub's docs), Hugo shortcodes (Kubernetes, GitLab) and Jinja outputs
    are not indexed as written: "data variables product" are no words of the page."""
    source = (
        "---\ntitle: Backups on {% data variables.product.prodname_ghe_server %}\n---\n"
        '## {{% heading "prerequisites" %}}\n\n'
        "退職した社員の{% data variables.product.prodname_ghe_server %}アカウントは停止する。"
        "{% ifversion ghes %}詳しくは[手順]({% link _docs/suspend.md %})を参照。{% endif %}\n\n"
        "{{< note >}}\n"
        'Kubernetes {{< param "version" >}} の'
        '{{< glossary_tooltip text="コントローラー" term_id="controller" >}}が再作成する。\n'
        "{{< /note >}}\n\n"
        "1. {% data reusables.enterprise_installation.ssh-into-instance %}\n"
        "1. Open {{ site.baseurl }}/admin and run `{{.ID}}`.\n"
    )
    page = read_markdown(source, "x.md")
    assert page.title == "Backups on prodname ghe server"
    assert [line for line in _lines(page.text) if line.strip()] == [
        "## prerequisites",
        "退職した社員のprodname ghe serverアカウントは停止する。詳しくは手順を参照。",
        "Kubernetes のコントローラーが再作成する。",
        "1. ssh into instance",
        "2. Open /admin and run `{{.ID}}`.",  # a code span keeps its braces
    ]
    for markup in ("{%", "{{<", "variables", "reusables", "term_id", "baseurl"):
        assert markup not in page.text.replace("`{{.ID}}`", "")


def test_auto_numbered_steps_are_numbered_as_displayed(page):
    lines = _lines(page.text)
    start = lines.index("1. EDR で端末を隔離する。")
    assert lines[start : start + 5] == [
        "1. EDR で端末を隔離する。",
        "2. 責任者に報告する。",
        "    1. 電話で第一報を入れる。",
        "    2. チャットで詳細を共有する。",
        "3. ログを保全する。",
    ]


def test_images_and_link_targets_are_out_link_text_stays(page):
    text = page.text
    assert "diagram.png" not in text and "ネットワーク構成図" not in text and "![" not in text
    assert (
        "詳細は エスカレーション手順 と 連絡先 を参照。 ポータル https://portal.example.jp も見る。"
        in text
    )
    for target in ("escalation.md", "contacts.md", "{:", "target=", "[contacts]", "連絡先一覧"):
        assert target not in text


def test_tables_become_rows_and_code_stays_verbatim(page):
    lines = _lines(page.text)
    assert "重大度 | 期限" in lines and "高 | 30分" in lines
    assert not any(set(line) <= set("|-: ") for line in lines if line)
    assert 'grep "[link](x)" <b>log</b>' in lines


def test_headings_are_still_found_by_the_chunker(page):
    assert page.headings is None
    paths = [s.heading_path for s in split_sections(page.text, page.kind) if s.level]
    assert paths == [("手順",), ("復旧",)]
    chunks = chunk_document(page, 500, 50)
    steps = next(c for c in chunks if "EDR" in c.body)
    assert steps.heading_path == ("手順",)
    assert all(page.text[c.start : c.end] == c.body for c in chunks)


def test_broken_front_matter_is_dropped_with_a_warning_and_the_body_read(tmp_path, caplog):
    path = tmp_path / "broken.md"
    path.write_text(
        "---\ntitle: [閉じていない\nowner: soc\n---\n# 本文の見出し\n本文です。\n", encoding="utf-8"
    )
    with caplog.at_level(logging.WARNING, logger="core.ingest.markdown"):
        doc, _ = load_file(path, tmp_path, 10_000)
    assert doc.title == "本文の見出し"
    assert "本文です。" in doc.text and "owner" not in doc.text and "閉じていない" not in doc.text
    assert any("broken.md" in r.getMessage() and "YAML" in r.getMessage() for r in caplog.records)


def test_front_matter_missing_its_opening_line_is_still_front_matter(caplog):
    with caplog.at_level(logging.WARNING, logger="core.ingest.markdown"):
        result = read_markdown(
            "cover: img/a.png\ndescription: 説明\n---\n本文だけが残る。\n", "x.md"
        )
    assert result.text == "本文だけが残る。"
    assert caplog.records


def test_two_thematic_breaks_at_the_top_are_not_front_matter():
    result = read_markdown("---\n\nはじめの段落。\n\n---\n次の段落。\n", "x.md")
    assert "はじめの段落。" in result.text and "次の段落。" in result.text
    assert "---" not in result.text


@pytest.mark.parametrize(
    ("source", "lead"),
    [
        (
            '!!! tip "Always assume the worst"\n    Treat it as the higher one.',
            "Tip: Always assume the worst",
        ),
        ('???+ aside hide-arrow "Take a break"\n    Rest after the handover.', "Take a break"),
        ('!!!danger "危険な操作"\n    本番では実行しない。', "危険: 危険な操作"),
        ('=== "Linux"\n    Run the script.', "Linux"),
    ],
)
def test_admonition_leads(source, lead):
    lines = read_markdown(source + "\n", "x.md").text.split("\n")
    assert lines[0] == lead
    assert not lines[1].startswith(" ")


def test_admonition_without_a_title_bar_has_no_lead():
    assert read_markdown('!!! note ""\n    本文のみ。\n', "x.md").text == "本文のみ。"


def test_nested_admonition_and_tab_indented_body():
    source = '!!! note "外側"\n\t!!! warning "内側"\n\t\t内側の本文。\n\t外側の本文。\n'
    lines = read_markdown(source, "x.md").text.split("\n")
    assert lines[0] == "メモ: 外側"
    assert "注意: 内側" in lines and "内側の本文。" in lines and "外側の本文。" in lines


def test_setext_headings_become_atx_and_inline_html_text_stays():
    text = read_markdown(
        "概要\n===\nこれは <em>重要</em> です。<script>alert(1)</script>\n", "x.md"
    ).text
    assert text.split("\n")[0] == "# 概要"
    assert "これは 重要 です。" in text and "alert" not in text


def test_ordered_list_restarts_after_a_paragraph_and_keeps_its_start():
    text = read_markdown("3. c\n1. d\n\n段落。\n\n1. x\n1. y\n", "x.md").text
    assert text.split("\n") == ["3. c", "4. d", "", "段落。", "", "1. x", "2. y"]


def test_sample_runbooks_keep_their_text_apart_from_tables():
    """The project's own runbooks are plain Markdown: reading them changes only table rows."""
    from core.text.normalize import normalize_text
    from tests.conftest import SAMPLE_RUNBOOKS

    for path in sorted(SAMPLE_RUNBOOKS.glob("*.md")):
        plain = normalize_text(path.read_text(encoding="utf-8"))
        read = read_markdown(path.read_text(encoding="utf-8"), path.name).text
        kept = [ln for ln in plain.split("\n") if "|" not in ln]
        assert kept == [ln for ln in read.split("\n") if "|" not in ln], path.name


def test_task_list_boxes_are_read_as_boxes():
    """GitHub-style checklists in playbooks: the box is a box, not "[x]" in the indexed text."""
    text = read_markdown(
        "# Phishing\n\n- [ ] Who received it?\n- [x] Block the sender\n1. [X] Notify the lead\n",
        "p.md",
    ).text
    assert text.splitlines()[2:] == [
        "- ☐ Who received it?",
        "- ☑ Block the sender",
        "1. ☑ Notify the lead",
    ]


def test_block_quotes_and_github_alerts_are_read_without_their_markers():
    """A list quoted is a list: GitHub's and Microsoft Learn's alerts (``> [!IMPORTANT]``)
    hold the warnings of a step, and their ``>`` markers hid the items from the answerer."""
    source = (
        "## パスワードのリセット\n\n"
        "> [!IMPORTANT]\n"
        ">\n"
        "> - 新しいパスワードを電子メールで送信しないでください。\n"
        ">\n"
        "> - アプリのパスワードも更新してください。\n\n"
        "> [!warning]\n"
        "> Do not reuse any of the last five passwords.\n\n"
        "> Quoted from the vendor:\n"
        "> > nested **text** \\> with an escaped mark\n\n"
        "```\n> not a quote in code\n```\n"
    )
    text = read_markdown(source, "x.md").text
    lines = [line for line in text.split("\n") if line.strip()]
    assert lines == [
        "## パスワードのリセット",
        "重要",
        "- 新しいパスワードを電子メールで送信しないでください。",
        "- アプリのパスワードも更新してください。",
        "Warning",
        "Do not reuse any of the last five passwords.",
        "Quoted from the vendor:",
        "nested **text** > with an escaped mark",
        "```",
        "> not a quote in code",  # code is kept verbatim
        "```",
    ]
    # the quoted items are list items to the chunker and the answerer
    from core.generation.extractive import split_units

    units = split_units(text.split("\n", 1)[1], 0)
    bullets = [u.text for u in units if u.kind == "bullet"]
    assert bullets[:2] == [
        "新しいパスワードを電子メールで送信しないでください。",
        "アプリのパスワードも更新してください。",
    ]


def _nonblank(source: str) -> list[str]:
    """The lines of the text read from ``source``, blank ones left out."""
    return [ln for ln in read_markdown(source, "x.md").text.split("\n") if ln]


@pytest.mark.parametrize(
    ("source", "lead"),
    [
        (":::warning Do not click\nNever open the attachment.\n:::", "Warning: Do not click"),
        (":::tip[Faster]\nUse the saved search.\n:::", "Tip: Faster"),
        ("::: danger 本番環境\n本番では実行しない。\n:::", "危険: 本番環境"),
        ("::: {.note}\nEscalate to the lead.\n:::", "Note"),
        (":::{important}\nKeep the headers.\n:::", "Tip"),  # MyST; labelled as MkDocs does
        ("::: details Full command\nkubectl get pods -A\n:::", "Full command"),
    ],
)
def test_directive_containers_read_as_admonitions(source, lead):
    """Docusaurus, VitePress, Pandoc and MyST write their callouts as ``:::type title`` …
    ``:::``: a lead line as an admonition's, and the body; no colons left in the text."""
    lines = _nonblank(source + "\n")
    assert lines[0] == lead
    assert len(lines) == 2 and ":::" not in lines[1]


def test_nested_and_unclosed_containers():
    source = (
        "::::note Outer\nOuter body.\n\n:::warning Inner\nInner body.\n:::\n\nAfter inner.\n::::\n"
        "\nBetween.\n\n:::tip Never closed\nLast line.\n"
    )
    lines = _nonblank(source)
    assert lines == [
        "Note: Outer",
        "Outer body.",
        "Warning: Inner",
        "Inner body.",
        "After inner.",
        "Between.",
        "Last line.",  # no container: its opening line alone is dropped
    ]


def test_an_mdx_page_s_imports_are_out_and_its_tabs_keep_their_labels():
    """Docusaurus reads .md pages as MDX: the module lines at the top are no text, and a
    ``<TabItem label="…">`` heads its part (which platform the steps are for), as a MkDocs
    content tab does; each tab's steps are numbered on their own."""
    source = (
        "import Tabs from '@theme/Tabs';\n"
        "import TabItem from '@theme/TabItem';\n\n"
        "# Phishing response\n\n"
        "<Tabs>\n"
        '  <TabItem value="m365" label="Microsoft 365">\n\n'
        "  1. Block the sender in Exchange Online.\n"
        "  1. Purge the message.\n\n"
        "  </TabItem>\n"
        '  <TabItem value="gws" label="Google Workspace" default>\n\n'
        "  1. Use the security investigation tool.\n\n"
        "  </TabItem>\n"
        "</Tabs>\n\n"
        "import is a word here, and so is export.\n"
    )
    lines = [ln.strip() for ln in read_markdown(source, "x.md").text.split("\n") if ln.strip()]
    assert lines == [
        "# Phishing response",
        "Microsoft 365",
        "1. Block the sender in Exchange Online.",
        "2. Purge the message.",
        "Google Workspace",
        "1. Use the security investigation tool.",
        "import is a word here, and so is export.",
    ]


def test_an_mdx_file_is_read_with_its_multiline_tags_and_heading_ids_out(tmp_path: Path):
    """A docs site's .mdx page: a heading's own anchor id (``[#overview]``, escaped or doubled
    by a translation) is no part of its title; a tag written over several lines (an image, a
    component with its title) leaves no attribute lines, and a component's title names its
    part."""
    page = tmp_path / "muting-rules.mdx"
    page.write_text(
        "---\ntitle: 'Muting rules: Suppress notifications'\n---\n\n"
        "import Callout from '@site/Callout';\n\n"
        "Muting rules stop notifications during maintenance.\n\n"
        "## How muting rules work [#overview]\n\n"
        '<img\n  title="Manage muting rules"\n  alt="Manage muting rules"\n'
        '  src="/images/muting-rules.webp"\n/>\n\n'
        "Muted incidents are still recorded.\n\n"
        "## 調整された開示プログラム [#coordinated\\_disclosure][#coordinated_disclosure]\n\n"
        "## アクセスログを無効にする\\{#disable-access-logs}\n\nIt stops at once.\n\n"
        '<Collapser\n  id="nerdgraph"\n  title="Mute with NerdGraph"\n>\n'
        "  Use the alertsMutingRuleCreate mutation.\n</Collapser>\n\n"
        '```jsx\n<img\n  src="kept.png"\n/>\n```\n',
        encoding="utf-8",
    )
    doc, _ = load_file(page, tmp_path, 1_000_000)
    assert doc.kind == "markdown" and doc.title == "Muting rules: Suppress notifications"
    prose, code = doc.text.split("```jsx")
    lines = [ln.strip() for ln in prose.split("\n") if ln.strip()]
    assert [ln for ln in lines if ln.startswith("#")] == [
        "## How muting rules work",
        "## 調整された開示プログラム",
        "## アクセスログを無効にする",
    ]
    assert not any(ln.startswith(("src=", "alt=", "title=", "id=", "/>", ">")) for ln in lines)
    assert "Mute with NerdGraph" in lines and "Muted incidents are still recorded." in lines
    assert code.split("\n")[1:4] == ["<img", '  src="kept.png"', "/>"]  # code as written


def test_gitbook_hints_lead_with_their_style():
    source = (
        '{% hint style="danger" %}\n本番のデータベースでは実行しない。\n{% endhint %}\n\n'
        "{% hint style='info' %}\nKeep the message headers.\n{% endhint %}\n\n"
        '{% hint style="warning" %}\nNever closed.\n'
    )
    lines = _nonblank(source)
    assert lines == [
        "危険",
        "本番のデータベースでは実行しない。",
        "Info",
        "Keep the message headers.",
        "Never closed.",
    ]


def test_a_page_of_containers_never_closed_is_read_in_linear_time():
    """A hostile page of 50,000 openers that no line closes: each search for an end would read
    the rest of the page (hours in all); the searches share a budget of the page's size, so
    the page reads in seconds, its text kept."""
    import time

    for opener in (":::note Never closed", '{% hint style="info" %}'):
        source = f"{opener}\nLine of text.\n" * 25_000
        started = time.monotonic()
        text = read_markdown(source, "x.md").text
        assert time.monotonic() - started < 15
        assert text.count("Line of text.") == 25_000 and ":::" not in text


@pytest.mark.parametrize(
    "line",
    [
        "<Tabs" + " " * 20_000 + "x",  # a component's tag never closed
        "import " + " " * 20_000 + "x",  # an MDX import that is none
        "import " + "a from " * 3_000 + "x",
        ":::note " + " " * 20_000 + "!",
        '{% hint style="info"' + " " * 20_000,
    ],
    ids=["component", "import", "import-from", "container", "hint"],
)
def test_long_lines_that_almost_open_a_block_read_in_linear_time(line):
    import time

    started = time.monotonic()
    text = read_markdown(line + "\n\nAfter.\n", "x.md").text
    assert time.monotonic() - started < 5
    assert text.endswith("After.")
