"""What a question set runs against: a target answers one question text at a time.

A target is anything with a ``name`` and ``ask(question_text) -> RunAnswer``. The two product
targets adapt the RAG pipelines, imported lazily so that this module (and the editor) work even
when a pipeline or its heavy dependencies are missing:

* ``runbook``: ``core.runbook_chat.ask(question, history, config[, settings])``
* ``wiki``: ``core.wiki_qa.ask(question, history, config[, settings])`` when it exists, else
  ``core.wiki_qa.answer_wiki(settings, question)`` (its WikiAnswer: ``text``, ``mode``,
  ``references``; ``insufficient_evidence`` is set when nothing was found)

Each question is asked with an empty history: a run must not depend on earlier answers. The
pipeline's config is the one given, else ``default_config(settings)`` when the module has it,
else its config class (``ChatConfig`` / ``WikiConfig`` / ``QAConfig``) with defaults and
``session_id="qset"`` (so that its audit records can be told from operators' questions), else
the Settings object. ``settings`` is passed when ``ask`` takes it.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from core.errors import WorkbenchError
from core.settings import Settings

CITATION_FIELDS = ("chunk_id", "file", "heading", "score", "excerpt", "doc_hash")
TARGET_LABELS: dict[str, str] = {"runbook": "手順書チャット", "wiki": "Wikipedia QA"}
_PIPELINES: dict[str, str] = {"runbook": "core.runbook_chat", "wiki": "core.wiki_qa"}


class TargetUnavailableError(WorkbenchError):
    """The pipeline behind a target cannot be used (not installed, not built, no ``ask``)."""


@dataclass(frozen=True, slots=True)
class RunAnswer:
    answer: str
    citations: list[dict[str, Any]] = field(default_factory=list)
    flags: dict[str, bool] = field(default_factory=dict)
    answer_mode: str = ""


@runtime_checkable
class Target(Protocol):
    name: str

    def ask(self, question_text: str) -> RunAnswer: ...


class FunctionTarget:
    """A target from a plain function (tests, scripts, other pipelines)."""

    def __init__(self, name: str, fn: Callable[[str], RunAnswer | Any]) -> None:
        self.name = name
        self._fn = fn

    def ask(self, question_text: str) -> RunAnswer:
        return to_run_answer(self._fn(question_text))


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def jsonable(value: Any) -> Any:
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        return jsonable(item())
    return str(value)


def citation_dict(citation: Any) -> dict[str, Any]:
    """A citation (object, pydantic model or dict) as a plain dict with the known fields first."""
    if hasattr(citation, "model_dump"):
        citation = citation.model_dump(mode="json")
    elif not isinstance(citation, Mapping) and hasattr(citation, "__dataclass_fields__"):
        citation = {k: getattr(citation, k) for k in citation.__dataclass_fields__}
    out = {name: jsonable(_get(citation, name)) for name in CITATION_FIELDS}
    if isinstance(citation, Mapping):
        out.update({str(k): jsonable(v) for k, v in citation.items() if k not in out})
    return out


def to_run_answer(result: Any) -> RunAnswer:
    """Normalize a pipeline's answer (``.answer``, ``.citations``, ``.flags``, ``.answer_mode``)."""
    if isinstance(result, RunAnswer):
        return result
    if isinstance(result, str):
        return RunAnswer(answer=result)
    citations = _get(result, "citations")
    if citations is None:
        citations = _get(result, "references") or []
    flags = _get(result, "flags") or {}
    if hasattr(flags, "model_dump"):
        flags = flags.model_dump()
    elif dataclasses.is_dataclass(flags) and not isinstance(flags, type):
        flags = dataclasses.asdict(flags)
    return RunAnswer(
        answer=str(_get(result, "answer", "") or ""),
        citations=[citation_dict(c) for c in citations],
        flags={str(k): bool(v) for k, v in dict(flags).items()},
        answer_mode=str(_get(result, "answer_mode", "") or ""),
    )


class PipelineTarget:
    """A product pipeline's ``ask(question, history, config)`` as a target (imported lazily)."""

    def __init__(self, name: str, settings: Settings, config: Any = None) -> None:
        if name not in _PIPELINES:
            raise TargetUnavailableError(
                f"実行先「{name}」はありません（{', '.join(TARGET_LABELS)} のいずれか）。"
            )
        self.name = name
        self.label = TARGET_LABELS[name]
        module_name = _PIPELINES[name]
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise TargetUnavailableError(
                f"「{self.label}」のパイプライン（{module_name}）が利用できません。"
                "このバージョンに含まれていないか、依存パッケージが不足しています。",
                detail=str(exc),
            ) from exc
        ask = getattr(module, "ask", None)
        answer_wiki = getattr(module, "answer_wiki", None)
        if callable(ask):
            kwargs = _call_kwargs(ask, module, settings, config)
            self._call: Callable[[str], Any] = lambda text: ask(text, [], **kwargs)
        elif name == "wiki" and callable(answer_wiki):
            extra = _accepted(answer_wiki, session_id="qset")
            self._call = lambda text: wiki_run_answer(answer_wiki(settings, text, **extra))
        else:
            raise TargetUnavailableError(
                f"「{self.label}」のパイプライン（{module_name}）に ask() がありません。"
            )

    def ask(self, question_text: str) -> RunAnswer:
        return to_run_answer(self._call(question_text))


def _accepted(fn: Callable, **candidates: Any) -> dict[str, Any]:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    return {k: v for k, v in candidates.items() if k in params}


def wiki_run_answer(answer: Any) -> RunAnswer:
    """``core.wiki_qa.answer_wiki``'s WikiAnswer (text, mode, references) as a RunAnswer."""
    citations = []
    for ref in _get(answer, "references") or []:
        text = str(_get(ref, "text", "") or "")
        label = _get(ref, "ref")
        citations.append(
            {
                "chunk_id": jsonable(_get(ref, "chunk_id")),
                "file": str(label) if label else f"jawiki:{_get(ref, 'title', '')}",
                "heading": jsonable(_get(ref, "title")),
                "score": jsonable(_get(ref, "score")),
                "excerpt": text[:200] + ("…" if len(text) > 200 else ""),
                "doc_hash": jsonable(_get(ref, "doc_hash")),
                "url": jsonable(_get(ref, "url")),
            }
        )
    mode = str(_get(answer, "mode", "") or "")
    return RunAnswer(
        answer=str(_get(answer, "text", "") or ""),
        citations=citations,
        flags={"insufficient_evidence": mode == "no_hit" or not citations},
        answer_mode=mode,
    )


_CONFIG_CLASSES = ("ChatConfig", "WikiConfig", "QAConfig")


def _default_config(module: Any, settings: Settings) -> Any:
    factory = getattr(module, "default_config", None)
    if callable(factory):
        return factory(settings)
    for name in _CONFIG_CLASSES:
        cls = getattr(module, name, None)
        if isinstance(cls, type):
            config = cls()
            if dataclasses.is_dataclass(config) and any(
                f.name == "session_id" for f in dataclasses.fields(config)
            ):
                config = dataclasses.replace(config, session_id="qset")
            return config
    return settings


def _call_kwargs(ask: Callable, module: Any, settings: Settings, config: Any) -> dict[str, Any]:
    """Keyword arguments after (question, history): config and settings, as ``ask`` names them."""
    try:
        params = list(inspect.signature(ask).parameters)
    except (TypeError, ValueError):
        params = ["question", "history", "config"]
    kwargs: dict[str, Any] = {}
    rest = params[2:]
    if rest:
        name = "config" if "config" in rest else rest[0]
        if name != "settings":
            kwargs[name] = config if config is not None else _default_config(module, settings)
    if "settings" in rest:
        kwargs["settings"] = settings
    return kwargs


def runbook(settings: Settings, config: Any = None) -> Target:
    """The runbook chat pipeline as a target."""
    return PipelineTarget("runbook", settings, config)


def wiki(settings: Settings, config: Any = None) -> Target:
    """The Wikipedia QA pipeline as a target."""
    return PipelineTarget("wiki", settings, config)


def make_target(name: str, settings: Settings, config: Any = None) -> Target:
    """The ``runbook`` or ``wiki`` target; TargetUnavailableError (Japanese) when it cannot run."""
    return PipelineTarget(name, settings, config)


__all__ = [
    "CITATION_FIELDS",
    "TARGET_LABELS",
    "FunctionTarget",
    "PipelineTarget",
    "RunAnswer",
    "Target",
    "TargetUnavailableError",
    "citation_dict",
    "jsonable",
    "make_target",
    "runbook",
    "to_run_answer",
    "wiki",
    "wiki_run_answer",
]
