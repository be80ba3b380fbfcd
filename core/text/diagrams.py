"""Mermaid diagrams in runbooks, read as what they say.

Playbooks kept on GitHub or published with MkDocs draw their flows in Mermaid (a fenced
```` ```mermaid ```` block, or ``<pre class="mermaid">`` in a page): the source is a program,
``Report[" 📧 Report"] --> Analyze[" 🔍 Analyze"]`` and ``style Report fill:#e74c3c``, which a
reader of a citation cannot read and whose identifiers and colours are noise to the keyword
index. A flowchart is read as its edges, one line per chain with the nodes' labels
(``Report → Analyze → Contain``; a labelled edge ``Clicked →[No] Block & Purge Only``); a
sequence diagram as its messages (``SOC → Mail Gateway: Pull email headers``) and its notes
and blocks' titles. Styling, class and click lines are dropped. Other kinds of diagram (Gantt,
pie, class, ER …) and a block that does not parse are kept as written.
"""

from __future__ import annotations

import re

# the diagram's first line alone: "graph = build()" in a Python block is no flowchart
_HEAD = re.compile(
    r"\s*(?:(graph|flowchart)(?:\s+(?:TB|TD|BT|RL|LR))?|(sequenceDiagram))\s*;?\s*",
    re.IGNORECASE,
)
# no line of a diagram is this long: a longer one is read as written (and never costs the
# patterns' backtracking on a hostile file)
MAX_LINE = 1000
_SKIP = re.compile(
    r"\s*(?:%%|style\s|classDef\s|class\s|linkStyle\s|click\s|direction\s|end\s*$"
    r"|activate\s|deactivate\s|autonumber\b|accTitle|accDescr)",
    re.IGNORECASE,
)
# a node: its id and an optional label in one of the shapes' brackets
_NODE = re.compile(
    r"\s*([\w.-]+)\s*(?:"
    r"\(\[(?P<a>.*?)\]\)|\[\[(?P<b>.*?)\]\]|\[\((?P<c>.*?)\)\]|\(\((?P<d>.*?)\)\)"
    r"|\{\{(?P<e>.*?)\}\}|\[/(?P<f>.*?)/\]|\[\\(?P<g>.*?)\\\]|\[(?P<h>.*?)\]|\((?P<i>.*?)\)"
    r"|\{(?P<j>.*?)\}|>(?P<k>.*?)\]"
    r")?\s*(?::::\w+)?\s*"
)
# an edge: the arrow and its label (``-->|No|``, ``-- No -->``, ``-.->``, ``==>``)
_EDGE = re.compile(
    r"\s*(?:<)?(?:--|==|-\.)(?:\s*(?P<inline>[^-=>|.][^>|]*?)\s*(?:--|==|\.-))?[-.=]*[>ox]?"
    r"(?:\|(?P<label>[^|]*)\|)?\s*"
)
_MESSAGE = re.compile(r"\s*([^-\s:][^:]*?)\s*(?:--?>>|--?>|--?x|--?\))\s*([^:]+?)\s*:\s*(.*)")
_PARTICIPANT = re.compile(r"\s*(?:participant|actor)\s+(\S+)(?:\s+as\s+(.+))?\s*$", re.IGNORECASE)
_NOTE = re.compile(r"\s*note\s+(?:over|left of|right of)\s+[^:]+:\s*(.+)", re.IGNORECASE)
_BLOCK = re.compile(r"\s*(?:loop|alt|else|opt|par|and|critical|break|rect)\b\s*(.*)", re.IGNORECASE)
_SUBGRAPH = re.compile(r"\s*subgraph\s+(?:[\w.-]+\s*)?(?:\[(.*?)\]|\"(.*?)\"|(.*))", re.IGNORECASE)
_ICON = re.compile(r"\bfa:fa-[\w-]+\s*")
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_AND = re.compile(r"\s*&\s*")


def is_mermaid(lines: list[str]) -> bool:
    """Whether ``lines`` (a code block's body) open with a diagram this module reads."""
    first = next((line for line in lines if line.strip() and not line.strip().startswith("%%")), "")
    return _HEAD.fullmatch(first) is not None


def _label(text: str | None) -> str:
    text = (text or "").strip().strip('"').strip("`").strip()
    text = _ICON.sub("", _BREAK.sub(" ", text))
    return " ".join(text.split())


def _flowchart(lines: list[str]) -> list[str] | None:
    labels: dict[str, str] = {}
    # a subgraph's title, or a chain of steps: (edge label into the nodes, the nodes' ids;
    # ``A & B`` is one step of two nodes). Read once the whole diagram has named its nodes.
    chains: list[str | list[tuple[str, list[str]]]] = []

    def one(text: str, pos: int) -> tuple[str, int] | None:
        m = _NODE.match(text, pos)
        if not m or not m.group(1):
            return None
        label = next((g for g in m.groups()[1:] if g is not None), None)
        if label is not None and _label(label):
            labels[m.group(1)] = _label(label)
        return m.group(1), m.end()

    def node(text: str, pos: int) -> tuple[list[str], int] | None:
        ids: list[str] = []
        while True:
            found = one(text, pos)
            if found is None:
                return None
            ids.append(found[0])
            more = _AND.match(text, found[1])
            if not more:
                return ids, found[1]
            pos = more.end()

    out: list[str] = []
    for line in lines[1:]:
        if not line.strip() or _SKIP.match(line):
            continue
        sub = _SUBGRAPH.fullmatch(line)
        if sub:
            title = _label(next((g for g in sub.groups() if g), ""))
            if title:
                chains.append(title)
            continue
        for part in line.split(";"):
            if not part.strip():
                continue
            first = node(part, 0)
            if first is None:
                return None
            chain = [("", first[0])]
            pos = first[1]
            while pos < len(part):
                edge = _EDGE.match(part, pos)
                if not edge or edge.end() == pos:
                    return None
                target = node(part, edge.end())
                if target is None:
                    return None
                chain.append((_label(edge.group("label") or edge.group("inline")), target[0]))
                pos = target[1]
            chains.append(chain)

    def named(ids: list[str]) -> str:
        return " & ".join(labels.get(i, i) for i in ids)

    for chain in chains:
        if isinstance(chain, str):
            out.append(chain)
            continue
        text = named(chain[0][1])
        for label, ids in chain[1:]:
            text += (f" →[{label}] " if label else " → ") + named(ids)
        out.append(text)
    return out


def _sequence(lines: list[str]) -> list[str]:
    names: dict[str, str] = {}
    out: list[str] = []
    for line in lines[1:]:
        if not line.strip() or _SKIP.match(line):
            continue
        if m := _PARTICIPANT.match(line):
            names[m.group(1)] = _label(m.group(2) or m.group(1))
        elif m := _NOTE.match(line):
            out.append(_label(m.group(1)))
        elif m := _MESSAGE.fullmatch(line):
            a, b = names.get(m.group(1), m.group(1)), names.get(m.group(2), m.group(2))
            out.append(f"{a} → {b}: {_label(m.group(3))}")
        elif m := _BLOCK.fullmatch(line):
            if _label(m.group(1)):
                out.append(_label(m.group(1)))
        else:
            out.append(_label(line))
    return [line for line in out if line]


def read_mermaid(lines: list[str]) -> list[str] | None:
    """The diagram's text lines (see the module), or None when ``lines`` are not a flowchart or
    sequence diagram this reader parses (keep them as written)."""
    body = [line for line in lines if line.strip() and not line.strip().startswith("%%")]
    head = _HEAD.fullmatch(body[0]) if body else None
    if head is None or any(len(line) > MAX_LINE for line in body):
        return None
    read = _sequence(body) if head.group(2) else _flowchart(body)
    return read or None
