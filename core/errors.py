"""Typed errors carrying a Japanese message for the user.

Core raises these; pages and the CLI show ``user_message`` and never a traceback.
"""

from __future__ import annotations


class WorkbenchError(Exception):
    """Base error. ``user_message`` is Japanese and safe to show to the user."""

    def __init__(self, user_message: str, *, detail: str | None = None) -> None:
        super().__init__(user_message if detail is None else f"{user_message} ({detail})")
        self.user_message = user_message
        self.detail = detail


class InputError(WorkbenchError):
    """The user's input (a path, a file, a query) cannot be used."""


class PathNotAllowedError(InputError):
    """A user-supplied path lies outside the allowed roots."""


class SourceFileError(InputError):
    """One source file cannot be read; the rest of the folder is still indexed."""

    def __init__(self, path: str, user_message: str, *, detail: str | None = None) -> None:
        super().__init__(user_message, detail=detail)
        self.path = path


class ContractError(InputError):
    """A payload violates a schema; ``errors`` lists (path, Japanese message)."""

    def __init__(self, user_message: str, errors: list[tuple[str, str]]) -> None:
        super().__init__(user_message)
        self.errors = errors


class IndexStateError(WorkbenchError):
    """An index is missing, being built, or inconsistent."""


class EmbedderMismatchError(IndexStateError):
    """An index was built with another embedder (name or dimension)."""


class ModelUnavailableError(WorkbenchError):
    """An optional model (cross-encoder, sentence-transformers, LLM) cannot be loaded."""


class LLMError(WorkbenchError):
    """The chat model failed after its retries."""
