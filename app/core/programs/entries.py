"""A program's entry points (the convention of :mod:`app.core.programs.loader`): which names of the executed
module are entry points — those in ``ENTRY_POINTS``, else every ``X`` with an ``X_args()``, else every public
function and ``torch.nn.Module`` instance of the file — and, per entry, its kind, line, docstring, example
arguments function and a jit wrapper's ``static_argnums`` / ``donate_argnums``."""

from __future__ import annotations

import ast
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeGuard

from app.core.programs.errors import ProgramError

EntryKind = Literal["function", "jit-function", "module"]


@dataclass
class EntryPoint:
    """One entry point of a program.

    ``name``: its name in the file; ``kind``: ``"function"``, ``"jit-function"`` (already ``jax.jit``-wrapped)
    or ``"module"`` (a ``torch.nn.Module`` instance); ``obj``: the object itself; ``line``: 1-based line where
    it is defined or assigned (0 when unknown); ``doc``: first line of its docstring; ``args_function``: the
    name of the function giving its example arguments (``"f_args"``, ``"example_args"``) or ``""`` when an
    argument spec is needed; ``static_argnums`` / ``donate_argnums``: from a jit wrapper (user argument
    indices)."""

    name: str
    kind: EntryKind
    obj: Any = field(repr=False)
    line: int = 0
    doc: str = ""
    args_function: str = ""
    static_argnums: tuple[int, ...] = ()
    donate_argnums: tuple[int, ...] = ()

    @property
    def label(self) -> str:
        return self.name


class Jitted(Protocol):
    """A ``jax.jit``-wrapped function as :func:`_is_jit` recognises it: callable, with the user's function as
    ``__wrapped__`` (and ``lower`` / ``trace``)."""

    __wrapped__: Callable[..., object]

    def __call__(self, *args: object, **kwargs: object) -> object: ...


def _is_torch_module(obj: object) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


def top_level_lines(source: str) -> dict[str, int]:
    """The 1-based line of each name a module's text defines or assigns at top level (first one wins; empty for
    text that does not parse)."""
    lines: dict[str, int] = {}
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return lines
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            lines.setdefault(node.name, node.lineno)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    lines.setdefault(t.id, node.lineno)
    return lines


def _is_jit(obj: object) -> TypeGuard[Jitted]:
    return callable(obj) and hasattr(obj, "__wrapped__") and hasattr(obj, "lower") and hasattr(obj, "trace")


def entry_point(name: str, obj: object, path: str, lines: dict[str, int], namespace: dict) -> EntryPoint | None:
    """``obj``, named ``name`` in the module ``namespace``, as an entry point (its line from ``lines``, of
    :func:`top_level_lines`); None when it is not a function, a jitted function or a ``torch.nn.Module``."""
    if _is_torch_module(obj):
        kind: EntryKind = "module"
        doc = (type(obj).__doc__ or "").strip()
    elif _is_jit(obj):
        kind = "jit-function"
        doc = (obj.__wrapped__.__doc__ or "").strip()
    elif isinstance(obj, types.FunctionType):
        kind = "function"
        doc = (obj.__doc__ or "").strip()
    else:
        return None
    static, donate = (), ()
    info = getattr(obj, "_jit_info", None)
    if kind == "jit-function" and info is not None:
        static = tuple(getattr(info, "static_argnums", ()) or ())
        donate = tuple(getattr(info, "donate_argnums", ()) or ())
    args_fn = f"{name}_args" if callable(namespace.get(f"{name}_args")) else (
        "example_args" if callable(namespace.get("example_args")) else "")
    return EntryPoint(name, kind, obj, lines.get(name, 0), doc.splitlines()[0] if doc else "", args_fn,
                      static, donate)


def _defined_here(obj: object, path: str) -> bool:
    fn = obj.__wrapped__ if _is_jit(obj) else obj
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename == path


def find_entries(module: types.ModuleType, path: str, source: str) -> dict[str, EntryPoint]:
    """The entry points of an executed program module (compiled from ``path``, text ``source``) by name: those
    listed in ``ENTRY_POINTS`` in its order, else the discovered ones in file order. Raises
    :class:`ProgramError` (stage ``"load"``) for a listed name not defined or not a function or module."""
    ns = vars(module)
    lines = top_level_lines(source)
    listed = ns.get("ENTRY_POINTS")
    if listed is not None:
        names = [listed] if isinstance(listed, str) else list(listed)
        missing = [n for n in names if n not in ns]
        if missing:
            raise ProgramError(f"ENTRY_POINTS names {', '.join(map(repr, missing))}, not defined in the file.",
                               error_type="NameError", file=path, line=lines.get("ENTRY_POINTS", 0), stage="load")
    else:
        names = [n[: -len("_args")] for n in ns if n.endswith("_args") and n != "example_args"
                 and not n.startswith("_") and n[: -len("_args")] in ns]
        if not names:
            names = [n for n, v in ns.items() if not n.startswith("_") and n != "example_args" and not n.endswith("_args")
                     and (_is_torch_module(v) or (callable(v) and not isinstance(v, type) and _defined_here(v, path)))]
    entries = {}
    for n in names:
        e = entry_point(n, ns[n], path, lines, ns)
        if e is None:
            raise ProgramError(f"Entry point {n!r} is a {type(ns[n]).__name__}, not a function or nn.Module.",
                               error_type="TypeError", file=path, line=lines.get(n, 0), stage="load")
        entries[n] = e
    if listed is not None:
        return entries
    return dict(sorted(entries.items(), key=lambda kv: (kv[1].line or 10**9)))
