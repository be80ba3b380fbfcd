"""A MkDocs site's pages take their titles from ``mkdocs.yml``'s nav when they have none."""

from __future__ import annotations

from pathlib import Path

from core.ingest.inspect import inspect_file
from core.ingest.mkdocs import nav_titles, read_config
from core.runbooks import index_runbooks, runbook_corpus

MKDOCS_YML = """site_name: Incident response
docs_dir: docs
theme:
  name: material
markdown_extensions:
  - pymdownx.emoji:
      emoji_index: !!python/name:material.extensions.emoji.twemoji
      emoji_generator: !!python/name:os.system
extra:
  analytics: !ENV GOOGLE_ANALYTICS_KEY
nav:
  - Home: index.md
  - Before an incident:
      - Severity Levels: before/severity_levels.md
      - before/roles.md
  - During an incident:
      - Isolating a host: during/isolate.md
  - Vendor status: https://status.example.com
  - Escape: ../outside.md
"""

SEVERITY = """Severity levels decide how we respond.

## SEV-1

Critical issue that warrants public notification.
"""

ISOLATE = """---
title: Host isolation
---
1. Contain the host from the EDR console.
"""

ROLES = """# Incident roles

The incident commander leads the call.
"""


def _site(root: Path) -> Path:
    (root / "mkdocs.yml").write_text(MKDOCS_YML, encoding="utf-8")
    for rel, text in {
        "docs/before/severity_levels.md": SEVERITY,
        "docs/during/isolate.md": ISOLATE,
        "docs/before/roles.md": ROLES,
        "docs/index.md": "Welcome.\n",
    }.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_nav_titles_are_read_as_data(tmp_path: Path):
    """Tags (``!!python/name``, ``!ENV``) are read as nothing, never resolved; URLs, untitled
    entries and paths leaving the docs folder give no title."""
    titles = nav_titles(_site(tmp_path))
    config = read_config(tmp_path)
    assert config["extra"] == {"analytics": None}
    assert config["markdown_extensions"][0]["pymdownx.emoji"]["emoji_generator"] is None
    assert titles == {
        "docs/index.md": "Home",
        "docs/before/severity_levels.md": "Severity Levels",
        "docs/during/isolate.md": "Isolating a host",
    }
    (tmp_path / "mkdocs.yml").write_text("nav: [unclosed\n", encoding="utf-8")
    assert nav_titles(tmp_path) == {}  # a broken configuration gives no titles
    assert nav_titles(tmp_path / "docs") == {}  # no configuration


def test_a_page_without_a_title_is_cited_by_its_nav_title(settings, runbook_dir: Path):
    _site(runbook_dir)
    index_runbooks(settings, runbook_dir, check_allowed=False)
    store = runbook_corpus(settings, runbook_dir).store
    severity = store.document("docs/before/severity_levels.md")
    assert severity is not None and severity.title == "Severity Levels"
    chunk = store.document_chunks("docs/before/severity_levels.md")[0].chunk
    # the nav title is a real title: cited and indexed (a file-name title is not indexed)
    assert chunk.title == "Severity Levels" and chunk.text.startswith("Severity Levels")
    # a page's own title comes first: front matter, then its first-level heading
    assert store.document("docs/during/isolate.md").title == "Host isolation"
    assert store.document("docs/before/roles.md").title == "Incident roles"
    # renaming the page in the nav reads it again, though its file did not change
    config = runbook_dir / "mkdocs.yml"
    config.write_text(config.read_text().replace("Severity Levels:", "Severity:"), "utf-8")
    report = index_runbooks(settings, runbook_dir, check_allowed=False)
    assert report.updated == ["docs/before/severity_levels.md"]
    assert store.document("docs/before/severity_levels.md").title == "Severity"


def test_inspect_finds_the_site_of_a_page(settings, tmp_path: Path):
    _site(tmp_path)
    shown = inspect_file(tmp_path / "docs" / "before" / "severity_levels.md", settings)
    assert shown.title == "Severity Levels"


def test_a_hostile_configuration_gives_no_titles_and_indexing_goes_on(settings, runbook_dir):
    """Nesting deep enough to exhaust the YAML reader, or a nav of a million entries: no titles,
    the pages are indexed under their own."""
    (runbook_dir / "docs").mkdir()
    (runbook_dir / "docs" / "a.md").write_text("Isolate the host.\n", encoding="utf-8")
    (runbook_dir / "mkdocs.yml").write_text("nav: " + "[" * 50_000 + "]" * 50_000, "utf-8")
    assert nav_titles(runbook_dir) == {}
    report = index_runbooks(settings, runbook_dir, check_allowed=False)
    assert report.added == ["docs/a.md"] and not report.skipped
    deep = "nav:\n" + "".join("  " * i + "- x:\n" for i in range(100)) + "  " * 100 + "- T: a.md\n"
    (runbook_dir / "mkdocs.yml").write_text(deep, encoding="utf-8")
    assert nav_titles(runbook_dir) == {}  # deeper than MAX_NAV_DEPTH
