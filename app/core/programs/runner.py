"""Calls of a program's entry point, each timed: trace / lower / compile / execute (ms, ``time.perf_counter``),
execute measured around ``jax.block_until_ready``.

:class:`ProgramRunner` keeps its own executable cache keyed by the abstract values of the dynamic arguments
(pytree structure, shape, dtype, weak type) and the values of the static ones, calling JAX's stages API
explicitly (``jit(f).trace(*args).lower().compile()``) on a miss, so every compile is timed and says why
("first call", "new input shape: arg 0 f32[7,128] → f32[8,128]", "static argument n changed: 3 → 4" — the
static argument named as the user wrote it, its index where it has no name).
A hit calls the cached ``Compiled`` directly. ``mode="no-jit"`` calls the function op by op instead.

Every call yields an :class:`app.core.events.CallRecord` (``step`` = the entry point's name, ``mode`` =
``"jit"`` / ``"no-jit"`` / ``"jit, bucketed"``), the records the latency plot and the CLI tables show.
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.core import compile_options  # a race's options and compile profiler
from app.core.events import COMPILE_PHASES_FIELD, CallRecord, Summary
from app.core.programs.arguments import (  # noqa: F401  (re-exported: their home before they moved)
    bucket_size,
    parse_static_values,
    parse_sweep,
    static_value_args,
    sweep_args,
    sweep_target,
)
from app.core.programs.compiles import CompileWatch, site_label
from app.core.programs.errors import ProgramError, ProgramStopped, Stage, program_error
from app.core.programs.interrupt import stoppable
from app.core.programs.loader import PreparedCall
from app.core.programs.sites import compile_sites
from app.core.programs.specs import describe

JIT, NO_JIT, BUCKETED = "jit", "no-jit", "jit, bucketed"

StopFn = Callable[[], bool] | None
RecordFn = Callable[[CallRecord], None] | None


def _leaf_label(x: object) -> str:
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        weak = "~" if getattr(x, "weak_type", False) else ""
        return weak + describe(x)
    return f"{type(x).__name__} scalar"


def _arg_signature(arg: object) -> tuple[Any, tuple[tuple[str, str], ...]]:
    """(treedef, ((path, "f32[7,128]"), …)) of one dynamic argument."""
    import jax

    flat, treedef = jax.tree_util.tree_flatten_with_path(arg)
    return treedef, tuple((jax.tree_util.keystr(p), _leaf_label(x)) for p, x in flat)


@dataclass(frozen=True)
class CallKey:
    """What selects an executable: per positional argument, its signature (dynamic) or value (static)."""

    parts: tuple[tuple[str, Any], ...]  # ("dyn", signature) or ("static", value)


@dataclass
class CallOutcome:
    """One call: ``outputs`` (ready), its ``record``, and ``stages`` ``(traced, lowered, compiled)`` when it
    compiled (else None)."""

    outputs: Any
    record: CallRecord
    stages: tuple[Any, Any, Any] | None = None


class ProgramRunner:
    """Calls of one :class:`PreparedCall` with an explicit executable cache.

    Keep one runner per entry point to reuse its executables across runs; :meth:`clear` forgets them.
    Not thread-safe: call it from one thread (the compute thread).
    """

    def __init__(self, prepared: PreparedCall):
        import jax

        self.prepared = prepared
        fn = prepared.fn

        # a new function per runner: JAX's in-process trace cache starts empty. functools.wraps gives it the user's
        # name, signature and source (JAX's messages follow __wrapped__: "tracing the function selu at
        # mine.py:4 … argument x", not this wrapper's file and "args[0]"; issue 29 flaw 19)
        @functools.wraps(fn)
        def entry(*args: object) -> Any:
            return fn(*args)

        self._jitted = jax.jit(entry, static_argnums=prepared.static_argnums,
                               donate_argnums=prepared.donate_argnums)
        self._executables: dict[CallKey, Any] = {}
        self._last_key: CallKey | None = None
        self.n_compiles = 0
        #: every compile a call makes, with its cause and cost (the entry's own, and the user's jitted functions
        #: an op-by-op call reaches): entered around each call, it remembers each function's previous key
        self.watch = CompileWatch()

    def clear(self) -> None:
        """Forget every compiled executable: the next call traces, lowers and compiles again."""
        self._executables.clear()
        self._last_key = None

    def key(self, args: tuple) -> CallKey:
        static = self.prepared.static_argnums
        return CallKey(tuple(("static", a) if i in static else ("dyn", _arg_signature(a))
                             for i, a in enumerate(args)))

    def _name(self, i: int) -> str:
        names = self.prepared.arg_names
        return names[i] if i < len(names) else f"arg {i - self.prepared.user_offset}"

    def _static_name(self, i: int) -> str:
        """Static argument ``i`` (an index into ``args``) as the user wrote it: its parameter name, else its
        user index."""
        return self.prepared.param_name(i) or str(i - self.prepared.user_offset)

    def compile_reason(self, key: CallKey) -> str:
        """Why ``key`` needs a new executable, compared with the previous call's."""
        old = self._last_key
        if old is None:
            return "first call"
        if len(old.parts) != len(key.parts):
            return f"new number of arguments: {len(old.parts)} → {len(key.parts)}"
        reasons = []
        for i, ((kind_a, a), (kind_b, b)) in enumerate(zip(old.parts, key.parts)):
            if a == b:
                continue
            name = self._name(i)
            if kind_a == "static" and kind_b == "static":
                reasons.append(f"static argument {self._static_name(i)} changed: {a!r} → {b!r}")
            elif kind_a == "dyn" and kind_b == "dyn":
                (tree_a, leaves_a), (tree_b, leaves_b) = a, b
                if tree_a != tree_b:
                    reasons.append(f"new pytree structure of {name}")
                    continue
                diffs = [(p, x, y) for (p, x), (_, y) in zip(leaves_a, leaves_b) if x != y]
                p, x, y = diffs[0]
                more = f" (+{len(diffs) - 1} more leaves)" if len(diffs) > 1 else ""
                kind = "shape" if x.lstrip("~").split("[")[0] == y.lstrip("~").split("[")[0] else "dtype"
                reasons.append(f"new input {kind}: {name}{p} {x} → {y}{more}")
            else:
                reasons.append(f"{name} became {'static' if kind_b == 'static' else 'dynamic'}")
        return "; ".join(reasons) if reasons else "new executable"

    def _input_shapes(self, args: tuple) -> dict[str, list[int]]:
        import jax

        shapes: dict[str, list[int]] = {}
        p = self.prepared
        for i, a in enumerate(args):
            if i < p.user_offset or i in p.static_argnums:
                continue
            for path, x in jax.tree_util.tree_flatten_with_path(a)[0]:
                if hasattr(x, "shape"):
                    shapes[self._name(i) + jax.tree_util.keystr(path)] = [int(d) for d in x.shape]
        return shapes

    def _fresh(self, args: tuple) -> tuple:
        """Copies of donated arguments (outside the timed region), so the caller's arrays stay usable."""
        donate = self.prepared.donate_argnums
        if not donate:
            return args
        import jax
        import jax.numpy as jnp

        return tuple(jax.tree_util.tree_map(jnp.copy, a) if i in donate else a for i, a in enumerate(args))

    def _guard(self, stage: Stage, work: Callable[[], Any], should_stop: StopFn) -> Any:
        p = self.prepared
        try:
            with stoppable(p.path, should_stop):
                return work()
        except (ProgramError, ProgramStopped):
            raise
        except Exception as exc:
            raise program_error(exc, p.path, stage, p.entry.name, p.entry.line) from exc

    def stages(self, args: tuple, should_stop: StopFn = None) -> tuple[Any, Any, Any, dict[str, float]]:
        """Trace, lower and compile for ``args`` (uncached): ``(traced, lowered, compiled, ms per phase)``.
        Raises :class:`ProgramError` at the user's line, :class:`ProgramStopped`."""
        t0 = time.perf_counter()
        traced = self._guard("trace", lambda: self._jitted.trace(*args), should_stop)
        t1 = time.perf_counter()
        lowered = self._guard("lower", traced.lower, None)
        t2, module = time.perf_counter(), compile_options.module_name(self._jitted, "entry")
        compiled = self._guard("compile", lambda: compile_options.run_compile("program", module, lambda: lowered.compile(
            compile_options.current())), None)
        t3 = time.perf_counter()
        return traced, lowered, compiled, {"trace": (t1 - t0) * 1000, "lower": (t2 - t1) * 1000,
                                           "compile": compile_options.observed_compile_ms() or (t3 - t2) * 1000}

    def lower(self, args: tuple | None = None, should_stop: StopFn = None) -> Any:
        """Trace and lower for ``args`` (default: the prepared arguments) without compiling: the jax
        ``Lowered`` (for :func:`app.core.passes.record.record_pipeline`). Raises :class:`ProgramError` at
        the user's line, :class:`ProgramStopped`."""
        args = self.prepared.args if args is None else args
        traced = self._guard("trace", lambda: self._jitted.trace(*args), should_stop)
        return self._guard("lower", traced.lower, None)

    def call(self, args: tuple | None = None, index: int = 0, mode: str = JIT,
             should_stop: StopFn = None) -> CallOutcome:
        """One timed call with ``args`` (default: the prepared arguments). ``mode``: :data:`JIT` (cached
        executable, compiling on a miss), :data:`NO_JIT` (op-by-op dispatch), or any label for a jit run.
        Raises :class:`ProgramError` (stage trace/lower/compile/execute, with the user's line) and
        :class:`ProgramStopped`."""
        import jax

        p = self.prepared
        args = p.args if args is None else args
        args = self._fresh(args)
        shapes = self._input_shapes(args)
        if mode == NO_JIT:
            t0 = time.perf_counter()
            with self.watch:
                out = self._guard("execute", lambda: jax.block_until_ready(p.fn(*args)), should_stop)
            wall = (time.perf_counter() - t0) * 1000
            record = CallRecord(index=index, step=p.entry.name, mode=mode, input_shapes=shapes, wall_ms=wall,
                                execute_ms=wall, timestamp=time.time(), inner_compiles=self.watch.take())
            return CallOutcome(out, record)
        key = self.key(args)
        executable = self._executables.get(key)
        timing: dict[str, Any] = {}
        stages = None
        if executable is None:
            from app.core.runtime.compiled_step import persistent_cache_hits  # noqa: PLC0415 - heavy: jax

            reason = self.compile_reason(key)
            hits_before = persistent_cache_hits()
            with self.watch:
                traced, lowered, executable, phases = self.stages(args, should_stop)
            explained = [c["jax_explanation"] for c in self.watch.take() if c.get("jax_explanation")]
            self._executables[key] = executable
            self.n_compiles += 1
            stages = (traced, lowered, executable)
            timing = dict(compiled=True, trace_ms=phases["trace"], lower_ms=phases["lower"],
                          compile_ms=phases["compile"], compile_reason=reason, compile_phases=phases,
                          persistent_cache_hit=persistent_cache_hits() > hits_before,
                          compile_site=site_label(p.path, p.entry.line, p.entry.name), jax_explanation=explained[0] if explained else None)
        self._last_key = key
        dynamic = tuple(a for i, a in enumerate(args) if i not in p.static_argnums)
        t0 = time.perf_counter()
        out = self._guard("execute", lambda: jax.block_until_ready(executable(*dynamic)), None)
        execute_ms = (time.perf_counter() - t0) * 1000
        compile_ms = sum(timing.get(COMPILE_PHASES_FIELD, {}).values())
        record = CallRecord(index=index, step=p.entry.name, mode=mode, input_shapes=shapes,
                            wall_ms=compile_ms + execute_ms, execute_ms=execute_ms, timestamp=time.time(), **timing)
        return CallOutcome(out, record, stages)

    def input_labels(self, args: tuple | None = None) -> list[str]:
        """One label per flattened dynamic input of the jaxpr: ``weights['fc1.weight']``, ``arg 0``, ``arg 1['w']``."""
        import jax

        p = self.prepared
        args = p.args if args is None else args
        labels = []
        for i, a in enumerate(args):
            if i in p.static_argnums:
                continue
            for path, _ in jax.tree_util.tree_flatten_with_path(a)[0]:
                labels.append(self._name(i) + jax.tree_util.keystr(path))
        return labels


@dataclass
class RunResult:
    """A run of calls. ``entry``: entry point name; ``mode``: ``"jit"``, ``"no-jit"`` or ``"jit, bucketed"``;
    ``records``: one :class:`CallRecord` per call made; ``summary``: its :class:`Summary`
    (``steady_decode_ms`` = median ``wall_ms`` of calls that did not compile, ``ttft_ms`` = first call's
    ``wall_ms``, ``n_tokens`` = 0); ``stopped``: ``should_stop`` ended it early; ``output``: the last
    call's outputs; ``stages``: ``(traced, lowered, compiled)`` of the first compiling call (None in no-jit);
    ``sizes``: per call, the swept size (sweeps only); ``padded_sizes``: the bucket each size was padded to;
    ``static_values``: per static argument (index into the prepared ``args``), its value in each call made."""

    entry: str
    mode: str
    records: list[CallRecord]
    summary: Summary
    stopped: bool = False
    output: Any = field(default=None, repr=False)
    stages: tuple[Any, Any, Any] | None = field(default=None, repr=False)
    sizes: list[int] = field(default_factory=list)
    padded_sizes: list[int] = field(default_factory=list)
    static_values: dict[int, list[Any]] = field(default_factory=dict)

    @property
    def n_compiles(self) -> int:
        return sum(1 for r in self.records if r.compiled)

    @property
    def first_call_ms(self) -> float | None:
        return self.records[0].wall_ms if self.records else None

    @property
    def steady_ms(self) -> float | None:
        """Median ``wall_ms`` of the calls that did not compile (None if every call compiled)."""
        return self.summary.steady_decode_ms


def program_summary(mode: str, records: list[CallRecord], total_ms: float) -> Summary:
    """The :class:`Summary` of a program run (see :class:`RunResult` for how its fields are used); its
    ``n_compiles`` and ``compile_ms`` count the compiles of the jitted functions an op-by-op entry calls too
    (:attr:`CallRecord.inner_compiles`), and a call that made any is not steady."""
    steady = [r.wall_ms for r in records if not r.compiled and not r.inner_compiles]
    sites = compile_sites(records)  # the entry's compiles and those of the jitted functions it calls
    return Summary(mode=mode, n_tokens=0, ttft_ms=records[0].wall_ms if records else None,
                   steady_decode_ms=statistics.median(steady) if steady else None, decode_tokens_per_s=None,
                   overall_tokens_per_s=0.0, total_ms=total_ms,
                   compile_ms=sum(s.compile_ms for s in sites), n_compiles=sum(s.n_compiles for s in sites),
                   n_calls=len(records))


class CallLoop:
    """The one loop over a run's calls — a request's lanes (:class:`app.core.programs.lanes.LaneRun`, for the CLI and
    the window's program service alike) and a settings race's (:mod:`app.core.programs.compute.race`): yields ``(args, CallOutcome)`` per call of
    ``arg_list`` made with ``runner`` in ``mode``; ``should_stop`` is checked before every call and reaches the
    user's code while it traces or runs. :attr:`stopped`: the loop ended early because of it. An error in the
    program raises its :class:`ProgramError` from the iteration."""

    def __init__(self, runner: ProgramRunner, arg_list: Sequence[tuple], mode: str, should_stop: StopFn) -> None:
        self.runner, self.arg_list, self.mode, self.should_stop = runner, arg_list, mode, should_stop
        self.stopped = False

    def __iter__(self) -> Iterator[tuple[tuple, CallOutcome]]:
        for i, args in enumerate(self.arg_list):
            if self.should_stop is not None and self.should_stop():
                self.stopped = True
                return
            try:
                outcome = self.runner.call(args, i, self.mode, self.should_stop)
            except ProgramStopped:
                self.stopped = True
                return
            yield args, outcome
