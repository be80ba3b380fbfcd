"""Chat-model factory and one call with usage and cost.

With ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` set, answers come from ``langchain_openai.ChatOpenAI``
(gpt-4o-mini by default, or any OpenAI-compatible server such as vLLM, Ollama or llama.cpp
serving Qwen2.5). The client retries with exponential backoff (``settings.llm_max_retries``);
after the last retry an ``LLMError`` carries a Japanese message.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from core.errors import LLMError
from core.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LLMReply:
    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    seconds: float

    @property
    def token_usage(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }


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


def chat_model(settings: Settings, temperature: float = 0.0):  # -> ChatOpenAI
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=settings.chat_model,
        api_key=settings.openai_api_key or "not-needed",
        base_url=settings.openai_base_url,
        temperature=temperature,
        max_retries=settings.llm_max_retries,
        timeout=settings.llm_timeout_sec,
    )


def complete(settings: Settings, system: str, user: str, temperature: float = 0.0) -> LLMReply:
    """One chat completion; raises ``LLMError`` once the client's retries are exhausted."""
    from langchain_core.messages import HumanMessage, SystemMessage

    model = chat_model(settings, temperature)
    started = time.perf_counter()
    try:
        message = model.invoke([SystemMessage(content=system), HumanMessage(content=user)])
    except Exception as exc:
        log.warning("LLM call failed after retries: %s: %s", type(exc).__name__, exc)
        raise LLMError(
            f"LLM の呼び出しに失敗しました（{settings.llm_max_retries}回再試行しました）。"
            "時間をおいて再度お試しください。",
            detail=f"{type(exc).__name__}: {exc}",
        ) from exc
    usage = getattr(message, "usage_metadata", None) or {}
    prompt_tokens = int(usage.get("input_tokens", 0))
    completion_tokens = int(usage.get("output_tokens", 0))
    name = (message.response_metadata or {}).get("model_name") or settings.chat_model
    text = message.content if isinstance(message.content, str) else str(message.content)
    return LLMReply(
        text=text.strip(),
        model=name,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost_usd=cost_usd(settings, settings.chat_model, prompt_tokens, completion_tokens),
        seconds=time.perf_counter() - started,
    )
