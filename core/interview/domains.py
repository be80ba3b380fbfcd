"""The four interview domains (sop, postmortem, recipe, daily_work) from one data file.

``data/interview/domains.yaml`` holds, per domain, the slot table of the design (section 11)
with importances (critical 0.8..1.0, auxiliary 0.3..0.6, never below the minimum 0.2), the
fields each slot is parsed into, the question templates and the fallback default question, and
the document template. ``load_domains`` validates it with Pydantic.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field, ValidationError, model_validator

from core.errors import InputError
from core.settings import PROJECT_ROOT

DOMAINS_FILE = PROJECT_ROOT / "data" / "interview" / "domains.yaml"
MIN_IMPORTANCE = 0.2
CRITICAL_RANGE = (0.8, 1.0)
AUXILIARY_RANGE = (0.3, 0.6)

GoalKind = Literal["sop", "postmortem", "recipe", "daily_work"]
SlotType = Literal["text", "record", "list", "sequence", "links"]
FieldKind = Literal[
    "text",  # the clause holding one of ``cues`` (or the whole answer without cues)
    "remainder",  # what is left once the other fields are taken out
    "whole",  # the whole answer (or item) text
    "magnitude",  # users, requests, %
    "money",
    "quantity",  # any number with a unit (cooking)
    "temperature",
    "heat",
    "duration",
    "time",
    "date",
    "due",
    "owner",
    "url",
    "ref",
    "criterion",
    "command",
    "condition",
    "category",
    "bool",
]


class FieldSpec(BaseModel):
    name: str
    label: str
    kind: FieldKind
    required: bool = False
    terms: list[str] = Field(default_factory=list)  # words a specific question mentions
    cues: list[str] = Field(default_factory=list)  # regexes locating a text field's clause
    values: dict[str, list[str]] = Field(default_factory=dict)  # category -> keywords
    from_topic: bool = False  # may be read from the session topic


class DocSpec(BaseModel):
    heading: str | None = None
    format: Literal["paragraph", "bullets", "numbered", "table", "fields"] | None = None


class SlotSpec(BaseModel):
    name: str
    label: str
    description: str
    type: SlotType
    importance: float = Field(ge=MIN_IMPORTANCE, le=1.0)
    critical: bool = False
    group: str | None = None  # slots of one group share a context: candidates for a bundle
    allow_none: bool = False  # 「特になし」 fills the slot
    searchable: bool = False  # a corpus may hold the answer (VoI_search)
    search_hint: str = ""
    min_chars: int = 6
    min_items: int = 1
    item_separators: str | None = None  # extra regex to split list items
    fields: list[FieldSpec] = Field(default_factory=list)
    require_any: list[list[str]] = Field(default_factory=list)
    terms: list[list[str]] = Field(default_factory=list)  # for slots without fields
    cues: list[str] = Field(default_factory=list)  # regexes: an answer mentions this slot
    questions: list[str] = Field(min_length=1)
    default_question: str
    followup: str = "{label}について、まだ{missing}が分かっていません。{missing}を教えてください。"
    criterion: str = "判断の基準や前提があれば、あわせて教えてください。"
    ask: str = ""  # a short noun phrase for bundled questions
    infer_from: list[str] = Field(default_factory=list)
    document: DocSpec = Field(default_factory=DocSpec)

    @model_validator(mode="after")
    def _check(self) -> SlotSpec:
        low, high = CRITICAL_RANGE if self.critical else AUXILIARY_RANGE
        if not low <= self.importance <= high:
            kind = "critical" if self.critical else "auxiliary"
            raise ValueError(f"{self.name}: {kind} importance must lie in [{low}, {high}]")
        names = {f.name for f in self.fields}
        for group in self.require_any:
            if not set(group) <= names:
                raise ValueError(f"{self.name}: require_any names unknown fields {group}")
        if not self.ask:
            self.ask = self.label
        return self

    def field(self, name: str) -> FieldSpec | None:
        return next((f for f in self.fields if f.name == name), None)

    def term_groups(self, only: list[str] | None = None) -> list[list[str]]:
        """What a specific question about this slot mentions (design 10.9 specificity)."""
        groups = [
            [f.label, *f.terms] for f in self.fields if f.terms and (only is None or f.name in only)
        ]
        if only is None or not groups:
            groups = groups + self.terms
        return groups


class DomainSpec(BaseModel):
    name: GoalKind
    label: str
    description: str
    turn_budget: int = Field(ge=2, le=60)
    hypothesis: str
    document_title: str
    slots: list[SlotSpec] = Field(min_length=1)
    # slots without which the document is not complete, whatever the coverage says (a
    # postmortem without a root cause): the hard stop waits until each is filled or the user
    # could not answer it (design 2.3, stop rule)
    stop_requires: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check(self) -> DomainSpec:
        names = [s.name for s in self.slots]
        if not set(self.stop_requires) <= set(names):
            raise ValueError(f"{self.name}: stop_requires names unknown slots")
        if len(names) != len(set(names)):
            raise ValueError(f"{self.name}: duplicate slot names")
        if not any(s.critical for s in self.slots):
            raise ValueError(f"{self.name}: at least one critical slot is needed")
        for slot in self.slots:
            if not set(slot.infer_from) <= set(names):
                raise ValueError(f"{self.name}.{slot.name}: infer_from names unknown slots")
        return self

    def slot(self, name: str) -> SlotSpec:
        for spec in self.slots:
            if spec.name == name:
                return spec
        raise KeyError(name)

    @property
    def critical_names(self) -> list[str]:
        return [s.name for s in self.slots if s.critical]


class DomainCatalog(BaseModel):
    version: int
    domains: dict[str, DomainSpec]


@lru_cache(maxsize=4)
def _load(path: str, mtime: float) -> DomainCatalog:
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError("ドメイン定義ファイルを読めません。", detail=str(exc)) from exc
    try:
        for name, body in (raw.get("domains") or {}).items():
            body.setdefault("name", name)
        return DomainCatalog.model_validate(raw)
    except (ValidationError, AttributeError) as exc:
        raise InputError("ドメイン定義ファイルの形式が正しくありません。", detail=str(exc)) from exc


def load_domains(path: Path | None = None) -> DomainCatalog:
    """The validated domain catalog (cached until the file changes)."""
    target = Path(path or DOMAINS_FILE)
    try:
        mtime = target.stat().st_mtime
    except OSError as exc:
        raise InputError("ドメイン定義ファイルが見つかりません。", detail=str(target)) from exc
    return _load(str(target), mtime)


def get_domain(name: str, path: Path | None = None) -> DomainSpec:
    catalog = load_domains(path)
    if name not in catalog.domains:
        known = "、".join(catalog.domains)
        raise InputError(f"未知のドメインです: {name}（選べるのは {known}）")
    return catalog.domains[name]


def domain_labels(path: Path | None = None) -> dict[str, str]:
    return {name: d.label for name, d in load_domains(path).domains.items()}
