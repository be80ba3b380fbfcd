"""Architecture rules for `core/`, checked on the source with `ast`.

- The import graph of `core/` has no cycle. Every import counts, at module level, inside a
  function or under `if TYPE_CHECKING:`: a lazy import that only dodges a cycle at run time is
  still a cycle in the design.
- Nothing under `core/` imports streamlit.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"

# Cycles known to remain, each as the sorted tuple of the modules in one strongly connected
# component. Empty: add an entry only with a comment naming who removes it and when.
KNOWN_CYCLES: set[tuple[str, ...]] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _core_modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(CORE.rglob("*.py"))}


def _resolve_from(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute package or module a `from ... import` names."""
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imported_names(module: str, path: Path, modules: Iterable[str] = ()) -> set[str]:
    """The module names the import statements anywhere in the file load.

    `from pkg import sub` names the submodule `pkg.sub` when it is one of `modules`, and the
    package `pkg` otherwise (a name its `__init__` defines).
    """
    known = set(modules)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve_from(module, path, node)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                names.add(sub if sub in known else target)
    return names


def _import_graph() -> dict[str, set[str]]:
    modules = _core_modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for imported in _imported_names(name, path, modules):
            # Resolve `a.b.c` to the longest prefix that is a module of core/.
            parts = imported.split(".")
            while parts and ".".join(parts) not in modules:
                parts.pop()
            if parts and ".".join(parts) != name:
                edges.add(".".join(parts))
        graph[name] = edges
    return graph


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def _one_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A concrete path a -> ... -> a inside one component, for the failure message."""
    members = set(component)
    start = component[0]
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start, start]
                if child not in parents:
                    parents[child] = node
                    nxt.append(child)
        frontier = nxt
    return component


def _describe(graph: dict[str, set[str]], components: list[list[str]]) -> str:
    lines = []
    for component in components:
        lines.append(f"cycle among {component}:")
        lines.append("    " + " -> ".join(_one_cycle(graph, component)))
    return "\n".join(lines)


def test_graph_sees_the_core_modules():
    graph = _import_graph()
    # The walk found the package and resolved relative and absolute imports to core modules.
    assert "core.retrieval.searcher" in graph
    assert "core.schemas.search" in graph["core.retrieval.searcher"]


def test_cycle_finder_reports_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _strongly_connected(graph) == [["a", "b", "c"]]
    assert _one_cycle(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]


def test_core_has_no_import_cycle():
    graph = _import_graph()
    components = _strongly_connected(graph)
    unexpected = [c for c in components if tuple(c) not in KNOWN_CYCLES]
    assert not unexpected, "import cycles in core/:\n" + _describe(graph, unexpected)
    stale = KNOWN_CYCLES - {tuple(c) for c in components}
    assert not stale, f"known cycles that no longer exist, remove them from KNOWN_CYCLES: {stale}"


def test_core_never_imports_streamlit():
    offenders = []
    for name, path in _core_modules().items():
        for imported in _imported_names(name, path):
            if imported == "streamlit" or imported.startswith("streamlit."):
                offenders.append(f"{path.relative_to(ROOT)}: {imported}")
    assert not offenders, "core/ must not import streamlit:\n" + "\n".join(sorted(offenders))
