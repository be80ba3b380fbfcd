"""The LLM port's contract: every chat-model call of the workbench goes through one object built from settings.

``LLMPort`` is the protocol (``complete``, ``complete_json``, ``stream``); ``OpenAIPort`` is the
implementation over ``langchain_openai.ChatOpenAI`` (gpt-4o-mini by default, or any
OpenAI-compatible server such as vLLM, Ollama or llama.cpp serving Qwen2.5). ``llm_port(settings)``
returns the port of the settings (built once per configuration). Tests inject their own port
through the callers' ``llm`` / ``port`` parameters, never by patching this module.

A hard time budget (``Budget``): each call has a deadline (``WB_LLM_ANSWER_BUDGET_SEC`` for an
answer) that retries and backoff live inside: the client itself never retries, each attempt's
timeout is min(remaining, ``WB_LLM_TIMEOUT_SEC``), a 429's ``Retry-After`` is waited only when it
fits, and the call is run in a worker thread that the caller stops waiting for when the deadline
passes (a hung server cannot hold an answer). Streams also have a first-token deadline
(``WB_LLM_FIRST_TOKEN_SEC``). Every call yields one ``LLMCall`` record (model, tokens, cost,
latency, attempts, outcome) on the reply or on the ``LLMCallError`` it raises.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from core.errors import LLMError
from core.schemas.answer import LLMCall
from core.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")
Messages = Sequence[tuple[str, str]]  # (role, content): system / human / ai

BACKOFF_BASE_SEC = 0.25  # doubled on each retry (capped), unless the server says Retry-After
REPAIR_NOTE = "直前の出力は無効です（{problem}）。スキーマどおりの JSON だけを返してください。"


@dataclass(frozen=True, slots=True)
class LLMReply:
    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    seconds: float
    call: LLMCall | None = None
    cut: bool = False  # longer than ``llm_max_answer_chars``: cut there

    @property
    def token_usage(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }


@dataclass(frozen=True, slots=True)
class JsonReply(Generic[T]):
    value: T
    reply: LLMReply
    repaired: bool  # the first reply was invalid and the repair attempt validated
    problem: str = ""  # what was wrong with the first reply


class LLMCallError(LLMError):
    """A call through the port failed; ``call`` is its record (outcome timeout or error)."""

    def __init__(self, user_message: str, call: LLMCall, *, detail: str | None = None) -> None:
        super().__init__(user_message, detail=detail)
        self.call = call

    @property
    def timed_out(self) -> bool:
        return self.call.outcome == "timeout"


@dataclass
class Budget:
    """A deadline shared by every attempt of a call (or every call of an answer)."""

    total_sec: float
    first_token_sec: float | None = None
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def for_answer(cls, settings: Settings) -> Budget:
        return cls(settings.llm_answer_budget_sec, settings.llm_first_token_sec)

    def remaining(self) -> float:
        return self.total_sec - (time.monotonic() - self.started)

    def elapsed(self) -> float:
        return time.monotonic() - self.started


@runtime_checkable
class LLMPort(Protocol):
    """What callers need from a chat model (the OpenAI implementation, or a test's fake)."""

    @property
    def model(self) -> str: ...

    def complete(
        self, system: str, user: str, *, stage: str, budget: Budget | None = None
    ) -> LLMReply: ...

    def complete_json(
        self,
        system: str,
        user: str,
        schema: Any,
        *,
        stage: str,
        budget: Budget | None = None,
        parse: Callable[[str], Any] | None = None,
        repair_note: str = REPAIR_NOTE,
    ) -> JsonReply[Any]: ...

    def stream(
        self, system: str, user: str, *, stage: str, budget: Budget | None = None
    ) -> Iterator[str | LLMReply]: ...


def cost_usd(settings: Settings, model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """USD from the price table (per 1M tokens); unknown models (local servers) cost 0."""
    price = settings.price_table.get(model)
    if price is None:
        # "gpt-4o-mini-2024-07-18" is priced as "gpt-4o-mini"
        price = next(
            (
                p
                for name, p in sorted(settings.price_table.items(), key=lambda kv: -len(kv[0]))
                if model.startswith(name)
            ),
            None,
        )
    if price is None:
        return 0.0
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000


def parse_json(text: str) -> Any:
    """Bare JSON (the default of ``complete_json``): a code fence or any text around it is invalid."""
    import json

    s = (text or "").strip()
    if s.startswith("```") or s.endswith("```"):
        raise ValueError("code fences are not allowed")
    return json.loads(s)
