"""Every compile a program's call makes, with its cause in the user's words and its cost: the jitted functions an
entry point calls itself (its own ``jax.jit`` in a ``--no-jit`` run), not only the entry's own executable.

:class:`CompileWatch` listens while a call runs, on the thread that runs it:

- JAX's cache-miss explanations (``jax_explain_cache_misses``, jax PRs #27980 and #27993): on a tracing cache
  miss ``jax._src.interpreters.partial_eval.explain`` logs ``"TRACING CACHE MISS at FILE:LINE:COL (FUNCTION):"``
  and the closest previous key's diff through the logger ``jax._src.interpreters.partial_eval`` at WARNING. A
  logging filter on that logger takes the message (and keeps it from the terminal); the explaining frame's
  arguments (:func:`app.core.jax_private.cache_miss_arguments`) give the function and its abstract arguments, from
  which the cause is said as the runner says it: ``static argument n changed: 2 → 3``, ``new input shape: x f32[4]
  → f32[5]``, ``changed closure constant: scale 2.0 → 3.0``, ``new function identity``, ``config change``.
- ``jax.monitoring``'s duration events ``/jax/core/compile/jaxpr_trace_duration``,
  ``jaxpr_to_mlir_module_duration`` and ``backend_compile_duration`` (seconds; in the compiling thread), the
  trace / lower / compile ms of each compile. A compile with no explanation (JAX's own primitives dispatched op by
  op, ``jit(broadcast_in_dim)``) is attributed to the user's line that made it.

Each compile is a dict with the compile fields of :class:`app.core.events.CallRecord` (``compile_site``,
``function``, ``compile_reason``, ``jax_explanation``, ``trace_ms``, ``lower_ms``, ``compile_ms``), stored in the
call's :attr:`CallRecord.inner_compiles`; :func:`app.core.programs.sites.compile_sites` totals them per call site.
Imports JAX on :meth:`CompileWatch.__enter__` only.
"""

from __future__ import annotations

import inspect
import logging
import os
import re
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

from app.core.jax_private import cache_miss_arguments, is_user_filename, jit_call_arguments
from app.core.programs.specs import describe

_EXPLAIN_LOGGER = "jax._src.interpreters.partial_eval"
_MISS = re.compile(r"^TRACING CACHE MISS at (.*?):(\d+)(?::\d+)? \((.*?)\):\s*$")
_EVENTS = {"/jax/core/compile/jaxpr_trace_duration": "trace_ms",
           "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower_ms",
           "/jax/core/compile/backend_compile_duration": "compile_ms"}
#: The app's own compute code (not its examples): never a user's call site.
_CORE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_active = threading.local()
_listening = False
_lock = threading.Lock()


def _current() -> CompileWatch | None:
    return getattr(_active, "watch", None)


def _on_duration(event: str, duration_secs: float, **kwargs: str | int) -> None:
    watch = _current()
    field = _EVENTS.get(event)
    if watch is not None and field is not None:
        watch._phase(field, duration_secs * 1000.0, str(kwargs.get("fun_name", "")))


class _MissFilter(logging.Filter):
    """Takes JAX's cache-miss explanations of the watching thread (and drops them from the log)."""

    def filter(self, record: logging.LogRecord) -> bool:
        watch = _current()
        if watch is None:
            return True
        message = record.getMessage()
        if not message.startswith("TRACING CACHE MISS"):
            return True
        watch._miss(message)
        return False


def _user_site() -> tuple[str, int, str]:
    """(file, line, function) of the innermost frame outside JAX, ``app/core`` and importlib."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if is_user_filename(name) and not name.startswith(_CORE_DIR) and "importlib" not in name:
            return name, frame.f_lineno, frame.f_code.co_name
        frame = frame.f_back
    return "", 0, ""


def site_label(file: str, line: int, function: str = "") -> str:
    """``mine.py:12 (main)``: a call site as the tables show it (the file's base name)."""
    if not file:
        return "(unknown)"
    return f"{os.path.basename(file)}:{line}" + (f" ({function})" if function else "")


def _closure(fun: Callable[..., object]) -> dict[str, str]:
    code = getattr(fun, "__code__", None)
    cells = getattr(fun, "__closure__", None) or ()
    out = {}
    for name, cell in zip(getattr(code, "co_freevars", ()), cells):
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if not callable(value) and not inspect.ismodule(value):
            out[name] = _short(value)
    return out


def _short(value: object, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _param_names(fun: Callable[..., object]) -> list[str]:
    try:
        return list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return []


def _positional(in_avals: object) -> list[Any]:
    """The positional parts of an explain key (JAX's flat tree ``FTTuple(FTTuple(args…), FTDict(kwargs))``): one
    ``FTPyTree`` (``.xs`` leaves, ``.tree``) or ``FTStatic`` (``.val``) per argument."""
    elts = getattr(in_avals, "elts", None)
    if not elts:
        return []
    return list(getattr(elts[0], "elts", ()))


def _dynamic_leaves(in_avals: object, names: tuple[str, ...] | None) -> list[tuple[str, str, Any]]:
    """``(name, "f32[4]", treedef)`` per dynamic leaf of an explain key's arguments."""
    out = []
    k = 0
    for part in _positional(in_avals):
        vals = getattr(part, "xs", None)
        if vals is None:
            continue
        for v in vals:
            label = v.str_short(True) if hasattr(v, "str_short") else str(v)
            name = names[k] if names and k < len(names) else f"arg {k}"
            out.append((name, label, getattr(part, "tree", None)))
            k += 1
    return out


def explain_cause(fun: Callable[..., object], in_avals: object, arg_names: tuple[str, ...] | None, previous: Any | None,
                  jax_text: str) -> str:
    """The cause of one tracing cache miss in the user's words, comparing ``in_avals`` (this call's explain key:
    ``((Pytree(xs, tree) | Static(val), …), kwargs)``, :func:`_positional`) with ``previous`` (the function's most recent cached
    key's, None when the function was never traced): static values old → new, leaf shapes / dtypes, pytree
    structure; ``jax_text`` (JAX's closest-key diff) names a config change."""
    if previous is None:
        return "first call"
    if jax_text.startswith("Tracing context doesn't match"):
        lines = [ln.strip(" *") for ln in jax_text.splitlines()[1:] if ln.strip()]
        return "config change" + (f": {'; '.join(lines)}" if lines else "")
    reasons: list[str] = []
    params = _param_names(fun)
    for i, (a, b) in enumerate(zip(_positional(previous), _positional(in_avals))):
        va, vb = getattr(a, "val", None), getattr(b, "val", None)
        if type(a).__name__ == type(b).__name__ == "FTStatic" and va != vb:
            name = params[i] if i < len(params) else str(i)
            reasons.append(f"static argument {name} changed: {_short(va)} → {_short(vb)}")
    old_leaves, new_leaves = _dynamic_leaves(previous, arg_names), _dynamic_leaves(in_avals, arg_names)
    if [t for *_, t in old_leaves] != [t for *_, t in new_leaves] or len(old_leaves) != len(new_leaves):
        reasons.append("new pytree structure of the arguments")
    else:
        for (name, x, _), (_, y, _) in zip(old_leaves, new_leaves):
            if x != y:
                kind = "shape" if x.split("[")[0] == y.split("[")[0] else "dtype"
                reasons.append(f"new input {kind}: {name} {x} → {y}")
    return "; ".join(reasons) or "new executable"


def _label(x: object) -> str:
    return describe(x) if hasattr(x, "shape") and hasattr(x, "dtype") else f"{type(x).__name__} scalar"


def _call_signature(fun: Callable[..., object], args: tuple, kwargs: dict, static_nums: tuple[int, ...],
                    static_names: tuple[str, ...]) -> tuple:
    """``(statics, structure, leaves)`` of one jit call: ``statics`` ``((name, repr), …)``, ``structure`` the
    dynamic arguments' pytree structure, ``leaves`` ``((name + path, "f32[4]"), …)``."""
    import jax

    params = _param_names(fun)
    statics, dynamic = [], []
    for i, a in enumerate(args):
        name = params[i] if i < len(params) else str(i)
        (statics if i in static_nums or name in static_names else dynamic).append((name, a))
    for k, v in kwargs.items():
        (statics if k in static_names else dynamic).append((k, v))
    leaves, trees = [], []
    for name, value in dynamic:
        flat, tree = jax.tree_util.tree_flatten_with_path(value)
        trees.append(str(tree))
        leaves += [(name + jax.tree_util.keystr(p), _label(x)) for p, x in flat]
    return tuple((n, _short(v)) for n, v in statics), tuple(trees), tuple(leaves)


def _signature_cause(old: tuple, new: tuple) -> str | None:
    """What changed from call signature ``old`` to ``new`` (:func:`_call_signature`); None when nothing did."""
    reasons = [f"static argument {n} changed: {a} → {b}" for (n, a), (_, b) in zip(old[0], new[0]) if a != b]
    if old[1] != new[1] or len(old[2]) != len(new[2]):
        reasons.append("new pytree structure of the arguments")
    else:
        for (name, x), (_, y) in zip(old[2], new[2]):
            if x != y:
                kind = "shape" if x.split("[")[0] == y.split("[")[0] else "dtype"
                reasons.append(f"new input {kind}: {name} {x} → {y}")
    return "; ".join(reasons) or None


class CompileWatch:
    """Context manager recording every compile made on the entering thread while it is active (see the module
    docstring). :attr:`compiles`: the compile dicts in order; :meth:`take` returns and clears them. Turns
    ``jax_explain_cache_misses`` on while active (restored after; not part of JAX's cache keys). Not re-entrant
    on one thread; other threads are not watched. Keep one watch per runner and enter it per call: it remembers
    each function's previous key, so a cause compares with the call before (``2 → 3``, then ``3 → 4``)."""

    def __init__(self) -> None:
        self.compiles: list[dict[str, Any]] = []
        self._pending: dict[str, Any] | None = None
        self._by_code: dict[Any, tuple[weakref.ReferenceType | None, dict[str, str]]] = {}
        self._last: dict[int, tuple[weakref.ReferenceType, Any]] = {}
        self._calls: dict[int, tuple[weakref.ReferenceType, tuple]] = {}
        self._saved: tuple[Any, ...] = ()

    def __enter__(self) -> CompileWatch:
        global _listening
        import jax

        with _lock:
            if not _listening:
                jax.monitoring.register_event_duration_secs_listener(_on_duration)
                _listening = True
        logger = logging.getLogger(_EXPLAIN_LOGGER)
        self._filter = _MissFilter()
        logger.addFilter(self._filter)
        self._saved = (logger.level, bool(jax.config.jax_explain_cache_misses))
        if not logger.isEnabledFor(logging.WARNING):
            logger.setLevel(logging.WARNING)
        jax.config.update("jax_explain_cache_misses", True)
        _active.watch = self
        return self

    def __exit__(self, *exc: object) -> None:
        import jax

        _active.watch = None
        logger = logging.getLogger(_EXPLAIN_LOGGER)
        logger.removeFilter(self._filter)
        level, explain = self._saved
        logger.setLevel(level)
        jax.config.update("jax_explain_cache_misses", explain)
        self._flush()

    def take(self) -> list[dict[str, Any]]:
        """The compiles recorded so far (each with ``trace_ms``, ``lower_ms``, ``compile_ms`` set), cleared."""
        self._flush()
        out, self.compiles = self.compiles, []
        return out

    # -- listeners (the compiling thread) -----------------------------------------------------------
    def _miss(self, message: str) -> None:
        """JAX's explanation of a tracing cache miss (logged after the trace, before its duration event)."""
        self._flush()
        head, _, rest = message.partition("\n")
        m = _MISS.match(head)
        file, line, caller = (m.group(1), int(m.group(2)), m.group(3)) if m else _user_site()
        jax_text = rest.split("For the closest previous key:", 1)[-1].strip() if rest else ""
        found = cache_miss_arguments()
        fun, in_avals, arg_names, previous = found if found else (None, None, None, None)
        name = getattr(fun, "__name__", "") or (rest.split()[-1] if rest else "")
        if previous is None and fun is not None:
            cause = self._identity_cause(fun)
        elif fun is not None:
            cause = explain_cause(fun, in_avals, arg_names, previous, jax_text)
        else:
            cause = jax_text or "cache miss"
        if fun is not None:
            self._remember(fun, in_avals)
        if jax_text.startswith("never seen function") or jax_text == "cache miss explanation unavailable":
            jax_text = ""
        self._pending = dict(compile_site=site_label(file, line, caller), function=name, compile_reason=cause,
                             jax_explanation=jax_text or None, trace_ms=None, lower_ms=None, compile_ms=None)
        self._attribute(self._pending)

    def _attribute(self, pending: dict[str, Any]) -> None:
        """Name a compile from the jit call that missed JAX's dispatch cache (its function and arguments): its
        cause compared with this function's previous compile here (a static value old → new, a new shape), which
        also covers a compile whose trace JAX had cached (traced before inside another jit: no explanation)."""
        found = jit_call_arguments()
        fun = found[0] if found else None
        code = getattr(fun, "__code__", None)
        if found is None or code is None or not is_user_filename(code.co_filename) \
                or code.co_filename.startswith(_CORE_DIR):
            if "compile_reason" not in pending:  # JAX's primitive or a library's jitted function, op by op
                file, line, caller = _user_site()
                pending.update(compile_site=site_label(file, line, caller), function=f"{pending['function']} (op by op)",
                               compile_reason="first call of a JAX function dispatched op by op")
            return
        fun, args, kwargs, static_nums, static_names = found
        signature = _call_signature(fun, args, kwargs, static_nums, static_names)
        before = self._calls.get(id(fun))
        if before is not None and before[0]() is fun:
            pending["compile_reason"] = _signature_cause(before[1], signature) or pending.get("compile_reason")
        elif "compile_reason" not in pending:
            pending["compile_reason"] = self._identity_cause(fun)
        if "compile_site" not in pending or pending["compile_site"] == "(unknown)":
            file, line, caller = _user_site()
            pending["compile_site"] = site_label(file, line, caller)
        pending["function"] = getattr(fun, "__name__", pending.get("function", ""))
        try:
            self._calls[id(fun)] = (weakref.ref(fun), signature)
        except TypeError:
            pass
        self._remember_code(fun)

    def _remember(self, fun: Callable[..., object], in_avals: object) -> None:
        try:
            self._last[id(fun)] = (weakref.ref(fun), in_avals)
        except TypeError:
            return

    def _remember_code(self, fun: Callable[..., object]) -> None:
        code = getattr(fun, "__code__", None)
        if code is not None:
            try:
                self._by_code[code] = (weakref.ref(fun), _closure(fun))
            except TypeError:
                pass

    def _identity_cause(self, fun: Callable[..., object]) -> str:
        """A function JAX never traced: the first call, or one re-created from the same code (a new identity,
        perhaps with other closure constants)."""
        seen = self._by_code.get(getattr(fun, "__code__", None))
        if seen is None:
            return "first call"
        ref, old = seen
        if ref is not None and ref() is fun:
            return "first call"
        new = _closure(fun)
        changed = [f"{k} {old[k]} → {v}" for k, v in new.items() if k in old and old[k] != v]
        if changed:
            return "changed closure constant: " + ", ".join(changed) + " (a new function object each time)"
        return "new function identity: the same code as a new object (jit it once, outside the loop)"

    def _phase(self, field: str, ms: float, fun_name: str) -> None:
        pending = self._pending
        if pending is not None and pending.get(field) is not None:
            self._flush()
            pending = None
        if pending is None:  # no explanation: a library's function, or a trace JAX had cached
            name = fun_name[4:-1] if fun_name.startswith("jit(") else fun_name
            pending = self._pending = dict(function=name, jax_explanation=None, trace_ms=None, lower_ms=None,
                                           compile_ms=None)
            self._attribute(pending)
        pending[field] = ms
        if field == "compile_ms":
            self._flush()

    def _flush(self) -> None:
        if self._pending is not None:
            self.compiles.append(self._pending)
            self._pending = None
