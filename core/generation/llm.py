"""The LLM port of the settings: ``llm_port(settings)`` builds it once per configuration.

The contract (``LLMPort``, ``Budget``, ``LLMReply``, ``LLMCallError``) is in
``core.generation.port``; the implementation over ``langchain_openai.ChatOpenAI`` in
``core.generation.openai_port``. They are re-exported here, the one import for callers.
"""

from __future__ import annotations

import threading
from typing import Any

from core.generation.openai_port import OpenAIPort
from core.generation.port import (
    Budget,
    JsonReply,
    LLMCallError,
    LLMPort,
    LLMReply,
    cost_usd,
    parse_json,
)
from core.settings import Settings

__all__ = [
    "Budget",
    "JsonReply",
    "LLMCallError",
    "LLMPort",
    "LLMReply",
    "OpenAIPort",
    "chat_model",
    "complete",
    "cost_usd",
    "llm_port",
    "parse_json",
]


def chat_model(settings: Settings, temperature: float = 0.0):  # -> ChatOpenAI
    """A plain ``ChatOpenAI`` of the settings (for LCEL examples; the workbench uses the port)."""
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=settings.chat_model,
        api_key=settings.openai_api_key or "not-needed",
        base_url=settings.openai_base_url,
        temperature=temperature,
        max_retries=settings.llm_max_retries,
        timeout=settings.llm_timeout_sec,
    )


_PORTS: dict[tuple[Any, ...], LLMPort] = {}
_PORTS_LOCK = threading.Lock()


def llm_port(settings: Settings) -> LLMPort:
    """The settings' port, built once per configuration (server, model, limits, prices)."""
    key = (
        settings.openai_base_url,
        settings.openai_api_key,
        settings.chat_model,
        settings.llm_timeout_sec,
        settings.llm_max_retries,
        settings.llm_max_tokens,
        settings.llm_max_answer_chars,
        settings.llm_answer_budget_sec,
        repr(sorted(settings.price_table.items())),
    )
    with _PORTS_LOCK:
        port = _PORTS.get(key)
        if port is None:
            if len(_PORTS) >= 16:
                _PORTS.pop(next(iter(_PORTS)))
            port = _PORTS[key] = OpenAIPort(settings)
            port.warm()  # import and build the client now, not inside an answer's budget
        return port


def complete(settings: Settings, system: str, user: str, temperature: float = 0.0) -> LLMReply:
    """One completion through the settings' port (kept for scripts; raises ``LLMError``)."""
    del temperature  # the port's model runs at temperature 0
    return llm_port(settings).complete(system, user, stage="script")
