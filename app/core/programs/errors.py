"""Errors in a user's program, located at the user's own line, and the stop signal of a program run.

:func:`program_error` turns any exception raised while loading, tracing, lowering, compiling or running a
program into one :class:`ProgramError` carrying JAX's (or Python's) message, the program file and the
1-based line in it: the innermost traceback frame in the program's file (for a ``SyntaxError``, the line the
parser names).
"""

from __future__ import annotations

import re
import traceback
from typing import Any, Literal

from app.core.errors import PlaygroundError
from app.core.units import nbytes

#: Where an error happened: loading the file (syntax error, exception at module level), building the
#: example arguments, tracing (JAX's ``ConcretizationTypeError`` / ``TracerBoolConversionError``, shape
#: errors), lowering, compiling, or executing (a run-time error, or any error in no-jit mode).
Stage = Literal["load", "args", "trace", "lower", "compile", "execute"]


class ProgramError(PlaygroundError):
    """An error in the user's program.

    ``message``: the exception's own text (JAX's message kept whole); ``error_type``: its class name
    (``"TracerBoolConversionError"``, ``"SyntaxError"``, ``"TypeError"``…); ``file``: the program's file
    (``""`` when no frame was in it); ``line``: 1-based line in ``file`` (0 when unknown); ``column``: 1-based
    column of a syntax error (0 otherwise); ``stage``: see :data:`Stage`; ``entry``: the entry point's name
    (``""`` while loading). ``str(error)`` is ``"file.py:12: TypeError: …"``.
    """

    def __init__(self, message: str, *, error_type: str, file: str = "", line: int = 0, column: int = 0,
                 stage: Stage = "load", entry: str = "", traceback_text: str = "", shown_file: str = ""):
        self.message = message
        #: how messages name ``file`` (``"05_loops.py (edited, not saved)"`` for the editor's changed copy of a
        #: file, so an installed example never looks broken); ``""``: ``file`` itself
        self.shown_file = shown_file
        self.error_type = error_type
        self.file = file
        self.line = line
        self.column = column
        self.stage = stage
        self.entry = entry
        self.traceback_text = traceback_text
        super().__init__(self.headline)

    @property
    def headline(self) -> str:
        where = f"{self.shown_file or self.file}:{self.line}: " if self.file and self.line else ""
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        return f"{where}{self.error_type}: {first}"

    def __str__(self) -> str:
        where = f"{self.shown_file or self.file}:{self.line}: " if self.file and self.line else ""
        return f"{where}{self.error_type}: {self.message}"


class ProgramStopped(PlaygroundError):  # noqa: N818 (a signal, not a failure)
    """The run was stopped (``should_stop()`` became true) between calls or inside user code while tracing."""


def _user_frame(exc: BaseException, path: str) -> tuple[int, int]:
    """(line, depth) of the innermost frame of ``exc``'s traceback in ``path``; (0, -1) when none."""
    line, depth = 0, -1
    for i, (frame, lineno) in enumerate(traceback.walk_tb(exc.__traceback__)):
        if frame.f_code.co_filename == path:
            line, depth = lineno, i
    return line, depth


_ALLOCATING = re.compile(r"(allocat\w* )(\d{7,})( bytes)")


def _readable_sizes(message: str) -> str:
    """``"Out of memory allocating 160000000000 bytes"`` → ``"… 160000000000 bytes (149 GB)"`` (binary prefixes,
    :func:`app.core.units.nbytes`): XLA writes allocation sizes in bytes (issue 29, flaw 19)."""
    return _ALLOCATING.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)} ({nbytes(int(m.group(2)))})", message)


def program_error(exc: BaseException, path: str, stage: Stage, entry: str = "", entry_line: int = 0) -> ProgramError:
    """The :class:`ProgramError` for ``exc`` raised by the program at ``path`` during ``stage``.

    The line is the parser's for a ``SyntaxError`` in the program file, else the innermost traceback frame
    in ``path`` of ``exc`` or, if none, of its ``__cause__`` / ``__context__`` chain (JAX re-raises some
    errors from its internals), else — for an error of the compiled program (compile or execute: out of memory,
    a device error) — ``entry_line``, the entry point's own line. Allocation sizes in bytes are also given in
    GiB."""
    if isinstance(exc, ProgramError):
        return exc
    tb_text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    if isinstance(exc, SyntaxError) and (exc.filename == path or not exc.filename):
        return ProgramError(exc.msg or str(exc), error_type=type(exc).__name__, file=path, line=exc.lineno or 0,
                            column=exc.offset or 0, stage=stage, entry=entry, traceback_text=tb_text)
    line = 0
    seen: set[int] = set()
    current: Any = exc
    while current is not None and id(current) not in seen and not line:
        seen.add(id(current))
        line, _ = _user_frame(current, path)
        current = current.__cause__ or current.__context__
    if not line and stage in ("lower", "compile", "execute"):
        line = entry_line
    message = _readable_sizes(str(exc) or type(exc).__name__)
    return ProgramError(message, error_type=type(exc).__name__, file=path if line else "", line=line,
                        stage=stage, entry=entry, traceback_text=tb_text)
