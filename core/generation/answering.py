"""One LLM answer through the port, streamed safely, with the extractive fallback left to the caller.

``generate`` is a generator used with ``yield from`` by both pipelines' ``ask_stream``: it yields
safe text deltas (``core.generation.safety.SafeStream``) as the model writes and returns a
``Generated``: the complete reply, or ``None`` with a Japanese warning when the model failed or
did not answer within the budget (the call is then recorded with outcome ``fallback``).
``drain`` turns such a stream into its final ``Answer`` (what the non-streaming ``ask`` returns).
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from dataclasses import dataclass, field

from core.errors import LLMError
from core.generation.llm import Budget, LLMPort, LLMReply
from core.generation.safety import SafeStream
from core.schemas.answer import Answer, LLMCall

FALLBACK_NOTE = "抽出型回答を表示しています。"


@dataclass
class Generated:
    reply: LLMReply | None  # None: fall back to the extractive answer
    calls: list[LLMCall] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def generate(
    port: LLMPort, system: str, user: str, *, stage: str, budget: Budget, max_chars: int
) -> Generator[str, None, Generated]:
    """Stream one answer; yields safe deltas, returns the reply (or the fallback's warning)."""
    safe = SafeStream()
    reply: LLMReply | None = None
    try:
        for item in port.stream(system, user, stage=stage, budget=budget):
            if isinstance(item, LLMReply):
                reply = item
                continue
            delta = safe.feed(item)
            if delta:
                yield delta
    except LLMError as exc:
        call = getattr(exc, "call", None) or LLMCall(
            stage=stage, outcome="error", failure="error", reason=str(exc.detail or exc)
        )
        call = call.model_copy(update={"outcome": "fallback"})
        return Generated(None, [call], [f"{exc.user_message} {FALLBACK_NOTE}"])
    if reply is None:  # a port that ended without its reply
        call = LLMCall(stage=stage, outcome="fallback", failure="error", reason="no final reply")
        return Generated(None, [call], [f"LLM の回答を受け取れませんでした。{FALLBACK_NOTE}"])
    warnings = []
    if reply.cut:
        warnings.append(f"LLM の回答が長すぎるため、{max_chars:,} 文字で打ち切りました。")
    return Generated(reply, [reply.call] if reply.call else [], warnings)


def apply_usage(answer: Answer, calls: Iterable[LLMCall]) -> None:
    """Record the calls on the answer; its tokens and cost are theirs (failed calls included)."""
    answer.llm_calls.extend(calls)
    if not answer.llm_calls:
        return
    prompt = sum(c.prompt_tokens for c in answer.llm_calls)
    completion = sum(c.completion_tokens for c in answer.llm_calls)
    answer.token_usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    answer.cost_usd = round(sum(c.cost_usd for c in answer.llm_calls), 6)


def drain(stream: Iterable[str | Answer]) -> Answer:
    """The final ``Answer`` of a pipeline's stream (the deltas are dropped)."""
    final: Answer | None = None
    for item in stream:
        if isinstance(item, Answer):
            final = item
    if final is None:  # pragma: no cover - every stream ends with its answer
        raise RuntimeError("the pipeline stream ended without an answer")
    return final
