"""The generated document: the domain's output template filled in Markdown.

Each slot is rendered by its ``document.format`` (paragraph, field bullets, table, bullets,
numbered list) in the template's order; missing slots say so and are listed at the end with the
stop reason, the critical coverage, facts still waiting for confirmation (retrieved or inferred
values cite where they come from) and the contradictions and how they were settled.

User text is escaped for Markdown (``md_escape``), so that an answer cannot inject links,
images or HTML into the rendered document.
"""

from __future__ import annotations

import re
from datetime import datetime

from core.interview.domains import DomainSpec, SlotSpec
from core.interview.fill import slot_view
from core.interview.slots import coverage
from core.interview.state import SessionState

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#!~])")
_SAFE_URL = re.compile(r"https?://[A-Za-z0-9.\-:]+(?:/[A-Za-z0-9._~%!$&'()*+,;=:@/\-?#]*)?")
MISSING = "（未記入）"


def md_escape(text: str) -> str:
    """Escape Markdown and HTML specials; newlines become spaces."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def _link(text: str) -> str:
    return f"<{text}>" if _SAFE_URL.fullmatch(text) else md_escape(text)


def _title(domain: DomainSpec, state: SessionState) -> str:
    topic = " ".join(state.topic.split())[:80]
    return domain.document_title.replace("{topic}", topic)


def _origin(state: SessionState, spec: SlotSpec) -> str:
    facts = state.current_facts(spec.name)
    notes = []
    for fact in facts:
        if fact.source_kind == "retrieval":
            notes.append(f"出典: {md_escape(fact.provenance)}・要確認")
        elif fact.source_kind == "model_infer":
            notes.append("ほかの項目から自動生成・要確認")
    return f"（{'、'.join(dict.fromkeys(notes))}）" if notes else ""


def render_slot(state: SessionState, spec: SlotSpec) -> list[str]:
    view = slot_view(state, spec)
    heading = spec.document.heading or spec.label
    lines = [f"## {md_escape(heading)}", ""]
    if view.empty:
        return [*lines, MISSING, ""]
    if view.is_none:
        return [*lines, "なし", ""]
    fmt = (
        spec.document.format
        or {
            "text": "paragraph",
            "record": "fields",
            "list": "bullets",
            "links": "bullets",
            "sequence": "table",
        }[spec.type]
    )
    if fmt == "fields" and view.fields:
        for f in spec.fields:
            if view.fields.get(f.name):
                lines.append(f"- {md_escape(f.label)}: {md_escape(view.fields[f.name])}")
    elif fmt == "table" and view.items and spec.fields:
        columns = [f for f in spec.fields if any(i.get(f.name) for i in view.items)]
        lines.append("| " + " | ".join(md_escape(f.label) for f in columns) + " |")
        lines.append("|" + " --- |" * len(columns))
        for item in view.items:
            lines.append("| " + " | ".join(md_escape(item.get(f.name, "")) for f in columns) + " |")
    elif fmt in ("bullets", "numbered") and view.items:
        for n, item in enumerate(view.items, start=1):
            value = str(item.get("ref") or item.get("text") or " ".join(map(str, item.values())))
            mark = f"{n}." if fmt == "numbered" else "-"
            lines.append(f"{mark} {_link(value) if 'ref' in item else md_escape(value)}")
    else:
        lines.append(md_escape(view.text))
    origin = _origin(state, spec)
    if origin:
        lines += ["", origin]
    return [*lines, ""]


def render_markdown(state: SessionState, domain: DomainSpec, specs: list[SlotSpec]) -> str:
    lines = [f"# {md_escape(_title(domain, state))}", ""]
    stop = state.stop
    meta = [
        f"作成: {datetime.now().strftime('%Y-%m-%d %H:%M')}",
        f"重要項目の充足率: {coverage(state.slots):.0%}",
        f"ターン数: {state.turn}",
    ]
    if stop:
        meta.insert(1, f"停止理由: {stop.label}")
    lines += ["> " + " ／ ".join(meta), ""]
    for spec in specs:
        lines += render_slot(state, spec)
    missing = [s for s in specs if not state.slots[s.name].filled]
    if missing:
        lines += ["## 未充足の項目", ""]
        for spec in missing:
            kind = "重要" if spec.critical else "補助"
            ratio = state.slots[spec.name].filled_ratio
            lines.append(f"- {md_escape(spec.label)}（{kind}・充足率 {ratio:.0%}）")
        lines.append("")
    pending = [
        state.facts[a.fact_id]
        for a in state.approvals.values()
        if a.decision == "pending"
        and a.fact_id in state.facts
        and state.facts[a.fact_id].source_kind in ("retrieval", "model_infer")
    ]
    if pending:
        lines += ["## 確認待ちの事実（検索・自動生成）", ""]
        for fact in pending[-12:]:
            label = next((s.label for s in specs if s.name == fact.slot_name), fact.slot_name)
            text = fact.text if len(fact.text) <= 60 else fact.text[:59] + "…"
            lines.append(f"- {md_escape(label)}: {md_escape(text)}")
        lines.append("")
    if state.contradictions:
        lines += ["## 矛盾の記録", ""]
        for c in state.contradictions:
            label = next((s.label for s in specs if s.name == c.slot_name), c.slot_name)
            status = md_escape(c.resolution) if c.resolved else "未解決"
            lines.append(
                f"- {md_escape(label)}の{md_escape(c.field)}: 「{md_escape(c.old_value)}」→"
                f"「{md_escape(c.new_value)}」: {status}"
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def document_filename(state: SessionState) -> str:
    day = (state.created_at or "")[:10] or datetime.now().strftime("%Y-%m-%d")
    return f"{state.goal_kind}-{day}-{state.session_id[:8]}.md"
