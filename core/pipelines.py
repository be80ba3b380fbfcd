"""The product's RAG pipelines by name: one shape, ``ask(question, history, config, settings)``.

``PIPELINES`` maps a target name to its ``Pipeline``: the question-set runner, the evaluator and
the CLI look a target up here (a plain mapping; tests and scripts pass their own). Each pipeline
returns the same ``core.schemas.answer.Answer`` and never raises for bad input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Protocol

from core.access import LOCAL, Principal
from core.runbook_chat import ChatConfig
from core.runbook_chat import ask as ask_runbook
from core.schemas.answer import Answer, Exchange
from core.settings import Settings
from core.wiki.qa import WikiConfig
from core.wiki.qa import ask as ask_wiki


class AskFn(Protocol):
    def __call__(
        self, question: str, history: Sequence[Exchange] | None, config: Any, settings: Settings
    ) -> Answer: ...


@dataclass(frozen=True, slots=True)
class Pipeline:
    """A pipeline and the configuration it runs with when a caller gives none."""

    name: str
    label: str  # Japanese, as the pages show the target
    ask: AskFn
    default_config: Callable[[], Any]

    def config_for(
        self, session_id: str, *, write_audit: bool = True, principal: Principal = LOCAL
    ) -> Any:
        """The default configuration, tagged so that its audit records can be told apart, run
        as ``principal`` (the runbook pipeline searches only the collections they may see)."""
        config = self.default_config()
        changes: dict[str, Any] = {"session_id": session_id, "write_audit": write_audit}
        if any(f.name == "principal" for f in fields(config)):
            changes["principal"] = principal
        return replace(config, **changes)

    def __call__(
        self,
        question: str,
        history: Sequence[Exchange] | None,
        config: Any,
        settings: Settings,
    ) -> Answer:
        return self.ask(question, history, config, settings)


PIPELINES: dict[str, Pipeline] = {
    "runbook": Pipeline("runbook", "手順書チャット", ask_runbook, ChatConfig),
    "wiki": Pipeline("wiki", "Wikipedia QA", ask_wiki, WikiConfig),
}
TARGET_LABELS: dict[str, str] = {name: p.label for name, p in PIPELINES.items()}
