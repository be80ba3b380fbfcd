"""What a question set runs against: a target answers one question text at a time.

A target is anything with a ``name`` and ``ask(question_text) -> RunAnswer``. The product
targets are the pipelines of ``core.pipelines.PIPELINES`` (a plain mapping of name to pipeline;
callers may pass their own): each question is asked with an empty history (a run must not depend
on earlier answers) and the pipeline's default configuration with ``session_id="qset"``, so that
its audit records can be told from operators' questions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any, Protocol, runtime_checkable

from core.access import LOCAL, Principal
from core.errors import WorkbenchError
from core.pipelines import PIPELINES, TARGET_LABELS
from core.schemas.answer import Answer
from core.settings import Settings

CITATION_FIELDS = ("chunk_id", "file", "heading", "score", "excerpt", "doc_hash")
RUN_SESSION_ID = "qset"


class TargetUnavailableError(WorkbenchError):
    """No pipeline of that name."""


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


def to_run_answer(result: Answer | RunAnswer | str) -> RunAnswer:
    """A pipeline's ``Answer`` as the run file keeps it (the full passage text is left out)."""
    if isinstance(result, RunAnswer):
        return result
    if isinstance(result, str):
        return RunAnswer(answer=result)
    citations = []
    for c in result.citations:
        data = c.model_dump(mode="json", exclude={"text"})
        citations.append(
            {
                **{name: jsonable(data.pop(name)) for name in CITATION_FIELDS},
                **{k: jsonable(v) for k, v in data.items()},
            }
        )
    return RunAnswer(
        answer=result.display_text(),
        citations=citations,
        flags={k: bool(v) for k, v in result.flags.model_dump().items()},
        answer_mode=result.answer_mode,
    )


class FunctionTarget:
    """A target from a plain function (tests, scripts, other pipelines)."""

    def __init__(self, name: str, fn: Callable[[str], Answer | RunAnswer | str]) -> None:
        self.name = name
        self._fn = fn

    def ask(self, question_text: str) -> RunAnswer:
        return to_run_answer(self._fn(question_text))


def make_target(
    name: str,
    settings: Settings,
    pipelines: Mapping[str, Any] | None = None,
    principal: Principal = LOCAL,
) -> Target:
    """The pipeline ``name`` of ``pipelines`` (default ``core.pipelines.PIPELINES``) as a target,
    asking as ``principal`` (its audit records name them).

    TargetUnavailableError (Japanese) when there is no such pipeline.
    """
    pipelines = PIPELINES if pipelines is None else pipelines
    pipeline = pipelines.get(name)
    if pipeline is None:
        raise TargetUnavailableError(
            f"実行先「{name}」はありません（{', '.join(pipelines)} のいずれか）。"
        )
    config = pipeline.config_for(RUN_SESSION_ID)
    if is_dataclass(config) and "principal" in {f.name for f in fields(config)}:
        config = replace(config, principal=principal)
    return FunctionTarget(name, lambda text: pipeline(text, [], config, settings))


__all__ = [
    "CITATION_FIELDS",
    "RUN_SESSION_ID",
    "TARGET_LABELS",
    "FunctionTarget",
    "RunAnswer",
    "Target",
    "TargetUnavailableError",
    "jsonable",
    "make_target",
    "to_run_answer",
]
