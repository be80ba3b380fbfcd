"""Page titles from a MkDocs site's ``nav`` (``mkdocs.yml``).

MkDocs pages often have neither a front-matter title nor a first-level heading: the site takes
their titles from the ``nav`` of ``mkdocs.yml`` (PagerDuty's incident-response docs do). Indexed
as published, such a page would be cited by its file name ("before/severity_levels"). When the
indexed folder holds the site's ``mkdocs.yml`` (the repository root, with the pages under its
``docs_dir``, "docs" by default), each page listed in ``nav`` gets its nav title; a page's own
front-matter title or first heading still comes first.

The configuration is read as data only: YAML tags such as ``!!python/name:…`` (Material's emoji
extension) or ``!ENV`` are read as nothing, never resolved or run. A configuration that cannot be
read gives no titles (the pages keep their own), with a warning in the log.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import cache
from pathlib import Path, PurePosixPath

log = logging.getLogger(__name__)

CONFIG_NAMES = ("mkdocs.yml", "mkdocs.yaml")
MAX_CONFIG_BYTES = 1_000_000
MAX_NAV_ENTRIES = 10_000
MAX_NAV_DEPTH = 32


@cache
def _data_loader():
    """A safe YAML loader that reads any tag (``!!python/name:x``, ``!ENV``) as ``None``."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def ignore(loader, tag_suffix, node):  # the tag is never resolved
        return None

    Loader.add_multi_constructor("!", ignore)
    Loader.add_multi_constructor("tag:", ignore)
    return Loader


def read_config(folder: Path) -> dict | None:
    """The mapping of ``folder``'s MkDocs configuration, or None (none, too large, unreadable)."""
    import yaml

    for name in CONFIG_NAMES:
        path = folder / name
        if not path.is_file() or path.is_symlink():
            continue
        try:
            if path.stat().st_size > MAX_CONFIG_BYTES:
                log.warning(
                    "%s: larger than %d bytes; page titles not read", path, MAX_CONFIG_BYTES
                )
                return None
            # a SafeLoader that reads unknown tags as None: no object is ever constructed
            data = yaml.load(path.read_text(encoding="utf-8-sig"), Loader=_data_loader())
        except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:
            log.warning("%s: not readable as a MkDocs configuration (%s)", path, exc)
            return None
        return data if isinstance(data, dict) else None
    return None


def _walk(nav: object, out: dict[str, str], budget: list[int], depth: int = 0) -> None:
    """Collect (page path, title) pairs of a nav tree: lists of ``{title: path}``,
    ``{title: [children]}`` or bare paths (no title: the page keeps its own). At most
    MAX_NAV_ENTRIES entries and MAX_NAV_DEPTH levels are read (a hostile file ends there)."""
    if budget[0] <= 0 or depth > MAX_NAV_DEPTH:
        return
    if isinstance(nav, list):
        for item in nav:
            budget[0] -= 1
            _walk(item, out, budget, depth + 1)
    elif isinstance(nav, Mapping):
        for title, target in nav.items():
            budget[0] -= 1
            if isinstance(target, str) and isinstance(title, str) and title.strip():
                out.setdefault(target.strip(), title.strip())
            elif isinstance(target, (list, Mapping)):
                _walk(target, out, budget, depth + 1)


def _page_id(docs_dir: str, target: str) -> str | None:
    """The page's path relative to the indexed folder, or None for a URL or a path that leaves
    the docs folder."""
    if (
        "://" in target
        or target.startswith(("/", "\\"))
        or not target.lower().endswith((".md", ".markdown"))
    ):
        return None
    parts = PurePosixPath(docs_dir.strip("/") or ".", target).parts
    if ".." in parts:
        return None
    return PurePosixPath(*parts).as_posix()


def nav_titles(folder: Path) -> dict[str, str]:
    """{document id relative to ``folder``: nav title} from ``folder``'s ``mkdocs.yml``."""
    config = read_config(folder)
    if not config:
        return {}
    docs_dir = config.get("docs_dir", "docs")
    if not isinstance(docs_dir, str):
        docs_dir = "docs"
    pairs: dict[str, str] = {}
    _walk(config.get("nav"), pairs, [MAX_NAV_ENTRIES])
    titles = {}
    for target, title in pairs.items():
        page = _page_id(docs_dir, target)
        if page is not None:
            titles[page] = title
    return titles


def site_title_for(file: Path, levels: int = 4) -> str | None:
    """The nav title of one Markdown file, from the nearest ``mkdocs.yml`` among its ``levels``
    parent folders (``python -m core inspect`` on a page of a site)."""
    file = file.resolve()
    for folder in list(file.parents)[:levels]:
        if any((folder / name).is_file() for name in CONFIG_NAMES):
            return nav_titles(folder).get(file.relative_to(folder).as_posix())
    return None
