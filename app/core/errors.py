"""Errors raised by the engine. Each message says what happened and what to do next.

Every error derives from :class:`PlaygroundError`, so the CLI and the GUI catch one type and show
``str(error)`` as one clear line. Raising one never changes engine state: a loaded model stays loaded.
"""

from __future__ import annotations


class PlaygroundError(Exception):
    """Base class of every error the engine reports to a user."""


class ModelNotFoundError(PlaygroundError):
    """A model id, built-in name or folder could not be resolved or loaded (unknown id, offline, bad path)."""


class UnsupportedModelError(PlaygroundError):
    """The architecture cannot run here: not a causal LM, or an ATen op without a torchax lowering."""


class PromptTooLongError(PlaygroundError):
    """The tokenised prompt does not fit in the static KV cache (``max_cache_len``)."""


class InvalidSettingsError(PlaygroundError):
    """A generation setting is out of range (negative temperature, top-p outside (0, 1], unknown mode, …)."""


class EmptyPromptError(InvalidSettingsError):
    """The prompt is empty (or only whitespace) and the model has no token to start from."""


class InsufficientMemoryError(PlaygroundError):
    """The estimated parameter bytes (times the copies the engine keeps) exceed the free memory."""


class SessionFileError(PlaygroundError):
    """A session file cannot be read or written: missing, not a session file, truncated, corrupted, or
    written by a newer format. ``path`` is the file, ``problem`` one phrase naming what is wrong; the
    message is ``"<path>: <problem>"``. Raising it changes nothing: no run is added or replaced."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = str(path)
        self.problem = problem
