"""Load a program — a Python file, or the text of the editor — and find its entry points.

The convention (docs/your-own-code.md), light as a notebook cell:

- **Entry points** are the names listed in ``ENTRY_POINTS = ["f", "model"]`` if the file defines it; else every
  name ``X`` for which the file defines ``X_args()``; else every public function defined in the file and every
  ``torch.nn.Module`` instance at module level. A function may be plain or already ``jax.jit``-wrapped (its
  ``__wrapped__`` function is traced, its ``static_argnums`` / ``donate_argnums`` kept).
- **Example arguments** come from ``X_args()`` (or ``example_args()`` for every entry without its own),
  returning a tuple of positional arguments — or a dict ``{"args": (...), "static_argnums": (1,),
  "donate_argnums": (0,)}`` — or from an argument spec (``f32[8,128]``, see :mod:`app.core.programs.specs`).
- A function whose arguments are ``torch.Tensor`` s, and any ``nn.Module``, runs through torchax: a module's
  weights are extracted with ``torchax.extract_jax`` and passed as the first argument (``weights``), never
  closed over.

Entry points are found by :mod:`app.core.programs.entries` (:class:`EntryPoint` is re-exported here).
Source text is compiled with the program's file name (a real temporary file for editor text without one)
and registered in :mod:`linecache`, so tracebacks, errors and the jaxpr's source lines name the user's file
and line.
"""

from __future__ import annotations

import inspect
import itertools
import linecache
import os
import sys
import tempfile
import types
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from app.core.inspect.ir import attribute_to_model_source
from app.core.programs.entries import EntryKind as EntryKind
from app.core.programs.entries import EntryPoint, entry_point, find_entries, top_level_lines
from app.core.programs.errors import ProgramError, ProgramStopped, program_error
from app.core.programs.interrupt import stoppable
from app.core.programs.specs import SpecError, describe, parse_spec, random_args

Backend = Literal["jax", "torchax"]

_counter = itertools.count()
_scratch: str | None = None


@dataclass
class PreparedCall:
    """An entry point ready to call: ``fn(*args)`` is a pure JAX function (torch code wrapped through torchax).

    ``args``: every positional argument, in order — for a module, ``args[0]`` is its weights dict (name →
    ``jax.Array``) and the user's inputs follow; ``arg_names``: one label per positional argument
    (``"weights"``, ``"arg 0"``, …); ``static_argnums`` / ``donate_argnums``: indices into ``args``;
    ``backend``: ``"jax"`` or ``"torchax"``; ``user_offset``: how many leading arguments the app added (1 for
    a module's weights); ``param_names``: per positional argument, its parameter name as the user wrote it
    (``"n"`` of ``def f(x, n)``, ``"weights"`` for a module's weights; ``""`` where unknown, e.g. ``*args``)."""

    program: Program = field(repr=False)
    entry: EntryPoint
    fn: Callable = field(repr=False)
    args: tuple
    arg_names: tuple[str, ...]
    static_argnums: tuple[int, ...] = ()
    donate_argnums: tuple[int, ...] = ()
    backend: Backend = "jax"
    user_offset: int = 0
    param_names: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        return self.program.path

    def param_name(self, i: int) -> str:
        """The name the user gave positional argument ``i`` (an index into ``args``), else ``""``."""
        return self.param_names[i] if 0 <= i < len(self.param_names) else ""

    def user_index(self, name: str) -> int:
        """The user argument index (0 = the user's first argument) of ``name``: a parameter name as written
        (``"n"``) or an index (``"1"``). Raises :class:`SpecError` naming the arguments there are."""
        n_user = len(self.args) - self.user_offset
        name = name.strip()
        if name.lstrip("-").isdigit():
            k = int(name)
            if 0 <= k < n_user:
                return k
        else:
            for i, p in enumerate(self.param_names[self.user_offset:]):
                if p == name:
                    return i
        known = ", ".join(f"{i} ({p})" if p else str(i)
                          for i, p in enumerate(self.param_names[self.user_offset:] or ("",) * n_user))
        raise SpecError(f"{self.entry.name} has no argument {name!r}; its arguments: {known or 'none'}.")

    def with_args(self, user_args: tuple) -> PreparedCall:
        """The same call with other user arguments (the weights of a module kept)."""
        return replace(self, args=self.args[: self.user_offset] + tuple(user_args))

    def describe_args(self) -> str:
        """The user arguments as a spec, e.g. ``f32[8,128], 3``."""
        import jax

        parts = []
        for i, a in enumerate(self.args[self.user_offset:]):
            if i + self.user_offset in self.static_argnums:
                parts.append(repr(a))
                continue
            leaves = jax.tree_util.tree_leaves(a)
            parts.append(describe(a) if len(leaves) == 1 and leaves[0] is a else
                         f"<pytree of {len(leaves)} leaves>")
        return ", ".join(parts)


@dataclass
class Program:
    """A loaded program. ``path``: the file its code was compiled from (the temporary file of unsaved
    editor text); ``source``: its text; ``module``: the executed module; ``entries``: entry points by
    name, in file order. ``display_name``: what views call it (the file's base name)."""

    path: str
    source: str
    module: types.ModuleType = field(repr=False)
    entries: dict[str, EntryPoint]
    display_name: str = ""

    def entry(self, name: str | None = None) -> EntryPoint:
        """The entry point ``name`` (any function, jitted function or ``nn.Module`` of the file, listed or not),
        or the first listed one. Raises :class:`ProgramError` if there is none or the name is unknown."""
        if not self.entries:
            raise ProgramError("The program defines no entry point: define a function and its example "
                               "arguments (f and f_args()), or list them in ENTRY_POINTS.",
                               error_type="NoEntryPoint", stage="load")
        if name is None:
            return next(iter(self.entries.values()))
        if name not in self.entries:
            # any function or module of the file can be named, even when not discovered as an entry point
            obj = vars(self.module).get(name)
            found = entry_point(name, obj, self.path, top_level_lines(self.source), vars(self.module)) \
                if obj is not None and not name.startswith("__") else None
            if found is not None:
                return found
            raise ProgramError(f"No entry point {name!r}; the program has {', '.join(self.entries)}.",
                               error_type="NoEntryPoint", stage="load")
        return self.entries[name]

    def prepare(self, entry: str | None = None, spec: str | None = None, seed: int = 0,
                static_argnums: tuple[int, ...] | None = None,
                should_stop: Callable[[], bool] | None = None) -> PreparedCall:
        """Example arguments for ``entry`` (from ``spec`` when given, else its ``X_args()`` / ``example_args()``)
        and its JAX function. ``static_argnums`` (user argument indices) overrides the file's. Raises
        :class:`ProgramError` (stage ``"args"``) for a failing args function or bad spec, and
        :class:`ProgramStopped`."""
        e = self.entry(entry)
        static, donate = e.static_argnums, e.donate_argnums
        try:
            with stoppable(self.path, should_stop):
                if spec is not None and spec.strip():
                    user_args = random_args(parse_spec(spec), seed)
                elif e.args_function:
                    raw = getattr(self.module, e.args_function)()
                    user_args, static, donate = _unpack_args(raw, static, donate)
                else:
                    raise ProgramError(
                        f"Entry point {e.name!r} has no example arguments: define {e.name}_args() returning "
                        "a tuple, or give an argument spec such as f32[8,128].",
                        error_type="MissingArguments", file=self.path, line=e.line, stage="args", entry=e.name)
        except (ProgramError, ProgramStopped):
            raise
        except Exception as exc:
            raise program_error(exc, self.path, "args", e.name) from exc
        if static_argnums is not None:
            static = tuple(static_argnums)
        return _prepare(self, e, tuple(user_args), tuple(static), tuple(donate))


def _unpack_args(raw: object, static: tuple, donate: tuple) -> tuple[tuple, tuple, tuple]:
    if isinstance(raw, dict) and "args" in raw:
        return (tuple(raw["args"]), tuple(raw.get("static_argnums", static)),
                tuple(raw.get("donate_argnums", donate)))
    if isinstance(raw, tuple):
        return raw, static, donate
    return (raw,), static, donate


def _has_tensors(tree: object) -> bool:
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    import jax

    leaves = jax.tree_util.tree_leaves(tree, is_leaf=lambda x: isinstance(x, torch.Tensor))
    return any(isinstance(x, torch.Tensor) for x in leaves)


def _param_names(fn: Callable[..., object], n: int) -> tuple[str, ...]:
    """The names of ``fn``'s first ``n`` positional parameters as written (``""`` past a ``*args`` or where
    the signature cannot be read)."""
    names: list[str] = []
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        params = []
    for p in params:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            break
        names.append(p.name)
    return tuple(names[:n]) + ("",) * max(0, n - len(names))


def _prepare(program: Program, e: EntryPoint, user_args: tuple, static: tuple, donate: tuple) -> PreparedCall:
    prepared = _prepare_call(program, e, user_args, static, donate)
    fn = e.obj.forward if e.kind == "module" else e.obj.__wrapped__ if e.kind == "jit-function" else e.obj
    params = _param_names(fn, len(user_args))
    return replace(prepared, param_names=("weights",) * prepared.user_offset + params)


def _prepare_call(program: Program, e: EntryPoint, user_args: tuple, static: tuple,
                  donate: tuple) -> PreparedCall:
    names = tuple(f"arg {i}" for i in range(len(user_args)))
    if e.kind == "module":
        import torch
        import torchax

        attribute_to_model_source()
        env = torchax.default_env()
        weights, jax_fn = torchax.extract_jax(e.obj)
        user_args = env.t2j_copy(user_args) if _has_tensors(user_args) else user_args

        def module_call(weights: object, *args: object) -> Any:
            with torch.no_grad():
                return jax_fn(weights, args)

        return PreparedCall(program, e, module_call, (weights, *user_args), ("weights", *names),
                            tuple(i + 1 for i in static), tuple(i + 1 for i in donate), "torchax", 1)
    fn = e.obj.__wrapped__ if e.kind == "jit-function" else e.obj
    if _has_tensors(user_args):
        import torch
        import torchax

        attribute_to_model_source()
        env = torchax.default_env()
        user_args = env.t2j_copy(user_args)
        torch_fn = fn

        def torch_call(*args: object) -> Any:
            targs = env.j2t_iso(args)
            with env, torch.no_grad():
                return env.t2j_iso(torch_fn(*targs))

        return PreparedCall(program, e, torch_call, tuple(user_args), names, static, donate, "torchax", 0)
    return PreparedCall(program, e, fn, tuple(user_args), names, static, donate, "jax", 0)


def _scratch_dir() -> str:
    global _scratch
    if _scratch is None:
        _scratch = tempfile.mkdtemp(prefix="torchax-playground-programs-")
    return _scratch


def editor_path(name: str = "untitled.py") -> str:
    """The temporary file that unsaved editor text named ``name`` is compiled from (one per name and process)."""
    return os.path.join(_scratch_dir(), os.path.basename(name) or "untitled.py")


def load_program(path: str | os.PathLike | None = None, source: str | None = None, *, name: str = "untitled.py",
                 should_stop: Callable[[], bool] | None = None) -> Program:
    """Load a program and find its entry points.

    - ``load_program("prog.py")``: the file as saved;
    - ``load_program("prog.py", source=text)``: the editor's text of that file (unsaved edits win; errors
      and jaxpr lines still name ``prog.py``);
    - ``load_program(source=text, name="untitled.py")``: text without a file, written to
      :func:`editor_path` so JAX's source info can name it.

    Runs the module's top-level code (stoppable with ``should_stop``). Raises :class:`ProgramError`
    (stage ``"load"``) for a missing file, a syntax error or an exception at module level, with its line;
    :class:`ProgramStopped` when stopped.
    """
    if path is None and source is None:
        raise ValueError("load_program needs a path or source text")
    path, source, edited = _source_of(path, source, name)
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    shown = f"{os.path.basename(path)} (edited, not saved)" if edited else ""
    try:
        code = compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        error = program_error(exc, path, "load")
        error.shown_file = shown  # an installed example's edited copy never looks like the example is broken
        raise error from None
    module_name = f"torchax_playground_program_{next(_counter)}"
    module = types.ModuleType(module_name)
    module.__file__ = path
    sys.modules[module_name] = module
    folder = os.path.dirname(path)
    sys.path.insert(0, folder)
    try:
        with stoppable(path, should_stop):
            exec(code, module.__dict__)
    except ProgramStopped:
        raise
    except (Exception, SystemExit) as exc:
        error = program_error(exc, path, "load")
        error.shown_file = shown
        raise error from exc
    finally:
        if sys.path and sys.path[0] == folder:
            sys.path.pop(0)
    program = Program(path, source, module, {}, os.path.basename(path))
    program.entries = find_entries(module, path, source)
    return program


def _source_of(path: str | os.PathLike | None, source: str | None, name: str) -> tuple[str, str, bool]:
    """``(path, source, edited)`` of :func:`load_program`'s arguments: the absolute file the code is compiled
    from (:func:`editor_path` for text without a file, written there), its text (the file's when ``source`` is
    None) and whether that text differs from the file on disk. Raises :class:`ProgramError` for an unreadable
    file."""
    edited = False
    if path is not None:
        path = os.path.abspath(os.fspath(path))
        if source is not None:  # the editor's text of a file: differs from the file on disk when edited
            try:
                edited = Path(path).read_text(encoding="utf-8") != source
            except OSError:
                edited = False
        if source is None:
            try:
                source = Path(path).read_text(encoding="utf-8")
            except OSError as exc:
                raise ProgramError(f"Cannot read {path}: {exc.strerror or exc}.", error_type=type(exc).__name__,
                                   stage="load") from None
    else:
        path = editor_path(name)
        Path(path).write_text(source or "", encoding="utf-8")
    assert source is not None
    return path, source, edited
