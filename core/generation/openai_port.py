"""``OpenAIPort``: the LLM port over ``langchain_openai.ChatOpenAI`` (any OpenAI-compatible server).

The client never retries by itself (``max_retries=0``): attempts, backoff and ``Retry-After``
waits live inside the call's ``Budget``; each attempt runs in a daemon worker thread that the
caller stops waiting for when the deadline passes, and its socket timeout is the attempt's
share of the budget, so an abandoned thread ends soon after. Streams are read by a worker into
a queue, with the first-token deadline on the first read.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import TypeAdapter, ValidationError

from core.generation.port import (
    BACKOFF_BASE_SEC,
    REPAIR_NOTE,
    Budget,
    JsonReply,
    LLMCallError,
    LLMReply,
    Messages,
    cost_usd,
    parse_json,
)
from core.schemas.answer import LLMCall
from core.settings import Settings

log = logging.getLogger(__name__)


class _Timeout(Exception):
    """The deadline passed while waiting for the worker."""


class _Failure(Exception):
    """One attempt failed; ``retry_in`` is None when retrying cannot help."""

    def __init__(
        self,
        reason: str,
        message: str,
        retry_in: float | None,
        *,
        told: bool = False,
        silent: bool = False,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.message = message
        self.retry_in = retry_in
        self.told = told  # the server said when (Retry-After): no exponential backoff
        self.silent = silent  # no reply at all (the client's own timeout)

    def wait_before(self, attempt: int) -> float | None:
        """Seconds to wait before attempt ``attempt + 1`` (exponential unless told)."""
        if self.retry_in is None or self.told:
            return self.retry_in
        return min(8.0, self.retry_in * 2 ** max(0, attempt - 1))


def _classify(exc: BaseException, model: str) -> _Failure:
    """A client exception as a failure with a Japanese message and whether to retry."""
    import openai

    name = f"{type(exc).__name__}: {str(exc)[:200]}"
    if isinstance(exc, openai.RateLimitError):
        after = None
        try:
            raw = exc.response.headers.get("retry-after")
            after = float(raw) if raw is not None else None
        except (ValueError, AttributeError):
            after = None
        return _Failure(
            f"429 (Retry-After {after}) {name}",
            "LLM サーバーが混雑しています（HTTP 429）。",
            BACKOFF_BASE_SEC if after is None else after,
            told=after is not None,
        )
    if isinstance(exc, openai.NotFoundError):
        return _Failure(
            name,
            f"モデル「{model}」が LLM サーバーにありません。WB_CHAT_MODEL を確認してください。",
            None,
        )
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return _Failure(
            name, "LLM サーバーの認証に失敗しました。API キーを確認してください。", None
        )
    if isinstance(exc, openai.BadRequestError):
        return _Failure(name, "LLM サーバーが要求を受け付けませんでした（HTTP 400）。", None)
    if isinstance(exc, openai.APIStatusError):
        return _Failure(
            name,
            f"LLM サーバーでエラーが発生しました（HTTP {exc.status_code}）。",
            BACKOFF_BASE_SEC,
        )
    if isinstance(exc, openai.APITimeoutError):
        return _Failure(name, "LLM サーバーが応答しませんでした。", BACKOFF_BASE_SEC, silent=True)
    if isinstance(exc, openai.APIConnectionError):
        return _Failure(name, "LLM サーバーに接続できませんでした。", BACKOFF_BASE_SEC)
    return _Failure(name, "LLM の呼び出しに失敗しました。", None)


def _text_of(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content or [])


class OpenAIPort:
    """The port over ``langchain_openai.ChatOpenAI`` (any OpenAI-compatible server)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._client: Any = None
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        return self.settings.chat_model

    def warm(self) -> None:
        """Build the client (imports langchain-openai) ahead of the first budgeted call."""
        self._chat()

    def _chat(self) -> Any:
        with self._lock:
            if self._client is None:
                from langchain_openai import ChatOpenAI

                self._client = ChatOpenAI(
                    model=self.settings.chat_model,
                    api_key=self.settings.openai_api_key or "not-needed",
                    base_url=self.settings.openai_base_url,
                    temperature=0,
                    max_retries=0,  # retries live inside the port's budget
                    timeout=self.settings.llm_timeout_sec,
                    max_tokens=self.settings.llm_max_tokens,
                    stream_usage=True,
                )
            return self._client

    # --- the calls ------------------------------------------------------------------------
    def complete(
        self, system: str, user: str, *, stage: str, budget: Budget | None = None
    ) -> LLMReply:
        return self._complete([("system", system), ("human", user)], stage, budget)

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
    ) -> JsonReply[Any]:
        """A reply validated against ``schema`` (a pydantic model, type or ``TypeAdapter``);
        an invalid reply is sent back once with the validation error (the repair)."""
        adapter = schema if isinstance(schema, TypeAdapter) else TypeAdapter(schema)
        parse = parse or parse_json
        budget = budget or Budget(self.settings.llm_answer_budget_sec)
        messages: list[tuple[str, str]] = [("system", system), ("human", user)]
        first: LLMReply | None = None
        problem = ""
        for attempt in range(2):
            reply = self._complete(messages, stage, budget, merge=first)
            try:
                value = adapter.validate_python(parse(reply.text))
                return JsonReply(value, reply, repaired=attempt > 0, problem=problem)
            except (ValidationError, ValueError) as exc:
                problem = str(exc).splitlines()[0][:200]
                first = reply
                messages += [("ai", reply.text), ("human", repair_note.format(problem=problem))]
        call = first.call.model_copy(update={"outcome": "error", "failure": "error"})  # type: ignore[union-attr]
        call.reason = f"invalid JSON after the repair: {problem}"
        raise LLMCallError(
            f"LLM の出力が再試行後も JSON として不正でした（{problem}）。", call, detail=problem
        )

    def stream(
        self, system: str, user: str, *, stage: str, budget: Budget | None = None
    ) -> Iterator[str | LLMReply]:
        """Text deltas as they arrive, then the complete ``LLMReply`` (with usage)."""
        budget = budget or Budget.for_answer(self.settings)
        return self._stream([("system", system), ("human", user)], stage, budget)

    # --- internals ------------------------------------------------------------------------
    def _record(self, stage: str, started: float, **fields: Any) -> LLMCall:
        call = LLMCall(
            stage=stage,
            model=fields.pop("model", None) or self.settings.chat_model,
            latency_ms=round((time.monotonic() - started) * 1000, 1),
            **fields,
        )
        call.cost_usd = round(
            cost_usd(
                self.settings, self.settings.chat_model, call.prompt_tokens, call.completion_tokens
            ),
            8,
        )
        return call

    def _fail(self, stage: str, started: float, failure: str, reason: str, message: str, **kw: Any):
        call = self._record(stage, started, outcome=failure, failure=failure, reason=reason, **kw)
        log.warning("LLM %s %s: %s", stage, failure, reason)
        return LLMCallError(message, call, detail=reason)

    def _timeout_error(self, stage: str, started: float, budget: Budget, note: str, **kw: Any):
        return self._fail(
            stage,
            started,
            "timeout",
            f"deadline passed ({note})",
            f"LLM が制限時間（{budget.total_sec:g} 秒）内に回答しませんでした。",
            **kw,
        )

    def _gave_up(
        self, stage: str, started: float, budget: Budget, failure: Any, expired: bool, **kw: Any
    ) -> LLMCallError:
        """The error after the last attempt: the deadline's when the server stayed silent, else
        the last failure's (an HTTP 500 is the cause even if the deadline ran out while retrying
        it)."""
        if failure is None or not failure.message or (expired and failure.silent):
            return self._timeout_error(
                stage, started, budget, failure.reason if failure else "", **kw
            )
        attempts = kw["attempts"]
        message = failure.message + f"（{attempts} 回試行しました）"
        reason = failure.reason + (" ; deadline passed before another attempt" if expired else "")
        return self._fail(stage, started, "error", reason, message, **kw)

    def _complete(
        self,
        messages: Messages,
        stage: str,
        budget: Budget | None,
        merge: LLMReply | None = None,
    ) -> LLMReply:
        """One completion with retries inside the budget; ``merge``: an earlier reply of the same
        call (the JSON repair) whose usage and attempts are added."""
        budget = budget or Budget(self.settings.llm_answer_budget_sec)
        started = time.monotonic()
        base = merge.call if merge is not None and merge.call is not None else None
        attempts = base.attempts if base else 0
        prompt0 = base.prompt_tokens if base else 0
        completion0 = base.completion_tokens if base else 0
        failure: _Failure | None = None
        chat = self._chat()
        for _ in range(self.settings.llm_max_retries + 1):
            remaining = budget.remaining()
            if remaining <= 0.05:
                break
            attempts += 1
            wait = min(remaining, self.settings.llm_timeout_sec)
            try:
                message = _in_worker(lambda w=wait: chat.invoke(list(messages), timeout=w), wait)
            except _Timeout:
                failure = _Failure(f"no reply within {wait:.1f} s", "", BACKOFF_BASE_SEC)
                continue  # the next attempt (if any budget is left) gets the rest
            except Exception as exc:  # the client's errors, classified
                failure = _classify(exc, self.settings.chat_model)
                pause = failure.wait_before(attempts)
                if pause is None or pause >= budget.remaining() - 0.05:
                    break  # retrying cannot help, or the wait does not fit in the budget
                time.sleep(pause)
                continue
            usage = getattr(message, "usage_metadata", None) or {}
            meta = getattr(message, "response_metadata", None) or {}
            text = _text_of(message).strip()
            prompt = prompt0 + int(usage.get("input_tokens", 0))
            completion = completion0 + int(usage.get("output_tokens", 0))
            kw = {
                "model": meta.get("model_name"),
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "attempts": attempts,
                "retries": attempts - 1,
            }
            if not text:
                raise self._fail(
                    stage, started, "error", "empty completion", "LLM の回答が空でした。", **kw
                )
            cut = len(text) > self.settings.llm_max_answer_chars
            text = text[: self.settings.llm_max_answer_chars] if cut else text
            call = self._record(stage, started, cut=cut, **kw)
            return _reply(text, call, cut)
        kw = {"attempts": attempts, "retries": max(0, attempts - 1)}
        kw.update(prompt_tokens=prompt0, completion_tokens=completion0)
        raise self._gave_up(stage, started, budget, failure, budget.remaining() <= 0.05, **kw)

    def _stream(self, messages: Messages, stage: str, budget: Budget) -> Iterator[str | LLMReply]:
        started = time.monotonic()
        first_deadline = (
            started + budget.first_token_sec if budget.first_token_sec else float("inf")
        )
        limit = self.settings.llm_max_answer_chars
        attempts = 0
        failure: _Failure | None = None
        while attempts <= self.settings.llm_max_retries:
            remaining = min(budget.remaining(), first_deadline - time.monotonic())
            if remaining <= 0.05:
                break
            attempts += 1
            wait = min(remaining, self.settings.llm_timeout_sec)
            worker = _StreamWorker(self._chat(), list(messages), wait)
            parts: list[str] = []
            first_ms: float | None = None
            usage: dict[str, Any] = {}
            meta: dict[str, Any] = {}
            finished = False
            cut = False
            try:
                while True:
                    now = time.monotonic()
                    limit_at = started + budget.total_sec
                    if first_ms is None:
                        limit_at = min(limit_at, first_deadline)
                    try:
                        kind, value = worker.get(limit_at - now)
                    except _Timeout:
                        worker.stop()
                        kw = {"attempts": attempts, "retries": attempts - 1, "streamed": True}
                        note = "no first token" if first_ms is None else "stream not finished"
                        if first_ms is None and budget.first_token_sec:
                            note += f" within {budget.first_token_sec:g} s"
                        raise self._timeout_error(
                            stage, started, budget, note, first_token_ms=first_ms, **kw
                        ) from None
                    if kind == "end":
                        break
                    if kind == "error":
                        raise value
                    text = _text_of(value)
                    usage = getattr(value, "usage_metadata", None) or usage
                    meta.update({k: v for k, v in (value.response_metadata or {}).items() if v})
                    finished = finished or bool(meta.get("finish_reason"))
                    if not text:
                        continue
                    if first_ms is None:
                        first_ms = round((time.monotonic() - started) * 1000, 1)
                    so_far = sum(map(len, parts))
                    if so_far + len(text) > limit:
                        text = text[: max(0, limit - so_far)]
                        cut = True
                    parts.append(text)
                    yield text
                    if cut:
                        worker.stop()
                        finished = True
                        break
            except LLMCallError:
                raise
            except Exception as exc:
                worker.stop()
                failure = _classify(exc, self.settings.chat_model)
                if parts:  # text was shown: a retry would repeat it
                    break
                pause = failure.wait_before(attempts)
                if pause is None or pause >= budget.remaining() - 0.05:
                    break
                time.sleep(pause)
                continue
            finally:
                worker.stop()
            kw = {
                "model": meta.get("model_name"),
                "prompt_tokens": int(usage.get("input_tokens", 0)),
                "completion_tokens": int(usage.get("output_tokens", 0)),
                "attempts": attempts,
                "retries": attempts - 1,
                "streamed": True,
                "first_token_ms": first_ms,
            }
            text = "".join(parts).strip()
            if not finished:
                raise self._fail(
                    stage,
                    started,
                    "error",
                    "stream ended without a finish reason (truncated)",
                    "LLM の回答が途中で切れました。",
                    **kw,
                )
            if not text:
                raise self._fail(
                    stage, started, "error", "empty completion", "LLM の回答が空でした。", **kw
                )
            yield _reply(text, self._record(stage, started, cut=cut, **kw), cut)
            return
        kw = {"attempts": attempts, "retries": max(0, attempts - 1), "streamed": True}
        expired = min(budget.remaining(), first_deadline - time.monotonic()) <= 0.05
        raise self._gave_up(stage, started, budget, failure, expired, **kw)


def _reply(text: str, call: LLMCall, cut: bool) -> LLMReply:
    return LLMReply(
        text=text,
        model=call.model,
        prompt_tokens=call.prompt_tokens,
        completion_tokens=call.completion_tokens,
        cost_usd=call.cost_usd,
        seconds=call.latency_ms / 1000,
        call=call,
        cut=cut,
    )


def _in_worker(fn: Callable[[], Any], wait: float) -> Any:
    """``fn()`` in a daemon thread; ``_Timeout`` when it has not returned within ``wait`` s (the
    thread is left to its own socket timeout, which is at most ``wait``)."""
    box: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)

    def run() -> None:
        try:
            box.put((True, fn()))
        except BaseException as exc:  # handed to the caller
            box.put((False, exc))

    threading.Thread(target=run, daemon=True, name="llm-call").start()
    try:
        ok, value = box.get(timeout=max(0.0, wait) + 0.1)
    except queue.Empty:
        raise _Timeout() from None
    if ok:
        return value
    raise value


class _StreamWorker:
    """Reads a ``ChatOpenAI.stream`` in a daemon thread into a queue, until told to stop."""

    def __init__(self, chat: Any, messages: list[tuple[str, str]], wait: float) -> None:
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(chat, messages, wait), daemon=True, name="llm-stream"
        )
        self._thread.start()

    def _run(self, chat: Any, messages: list[tuple[str, str]], wait: float) -> None:
        chunks = None
        try:
            chunks = chat.stream(messages, timeout=wait)
            for chunk in chunks:
                if self._stop.is_set():
                    break
                self._queue.put(("chunk", chunk))
            self._queue.put(("end", None))
        except BaseException as exc:
            self._queue.put(("error", exc))
        finally:
            if chunks is not None and hasattr(chunks, "close"):
                with contextlib.suppress(Exception):  # closing a broken stream
                    chunks.close()

    def get(self, wait: float) -> tuple[str, Any]:
        try:
            return self._queue.get(timeout=max(0.0, wait))
        except queue.Empty:
            raise _Timeout() from None

    def stop(self) -> None:
        self._stop.set()
