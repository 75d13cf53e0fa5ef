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

import ast
import functools
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.core.events import CallRecord, Summary
from app.core.programs.errors import ProgramError, ProgramStopped, Stage, program_error
from app.core.programs.interrupt import stoppable
from app.core.programs.loader import PreparedCall
from app.core.programs.specs import ArraySpec, SpecError, describe, parse_spec, random_args

JIT, NO_JIT, BUCKETED = "jit", "no-jit", "jit, bucketed"

StopFn = Callable[[], bool] | None
RecordFn = Callable[[CallRecord], None] | None


def _leaf_label(x: Any) -> str:
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        weak = "~" if getattr(x, "weak_type", False) else ""
        return weak + describe(x)
    return f"{type(x).__name__} scalar"


def _arg_signature(arg: Any) -> tuple[Any, tuple[tuple[str, str], ...]]:
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
        def entry(*args: Any) -> Any:
            return fn(*args)

        self._jitted = jax.jit(entry, static_argnums=prepared.static_argnums,
                               donate_argnums=prepared.donate_argnums)
        self._executables: dict[CallKey, Any] = {}
        self._last_key: CallKey | None = None
        self.n_compiles = 0

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
        phases: dict[str, float] = {}
        t0 = time.perf_counter()
        traced = self._guard("trace", lambda: self._jitted.trace(*args), should_stop)
        t1 = time.perf_counter()
        lowered = self._guard("lower", traced.lower, None)
        t2 = time.perf_counter()
        compiled = self._guard("compile", lowered.compile, None)
        t3 = time.perf_counter()
        phases.update(trace=(t1 - t0) * 1000, lower=(t2 - t1) * 1000, compile=(t3 - t2) * 1000)
        return traced, lowered, compiled, phases

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
            out = self._guard("execute", lambda: jax.block_until_ready(p.fn(*args)), should_stop)
            wall = (time.perf_counter() - t0) * 1000
            record = CallRecord(index=index, step=p.entry.name, mode=mode, input_shapes=shapes, wall_ms=wall,
                                execute_ms=wall, timestamp=time.time())
            return CallOutcome(out, record)
        key = self.key(args)
        executable = self._executables.get(key)
        timing: dict[str, Any] = {}
        stages = None
        if executable is None:
            from app.core.runtime.compiled_step import persistent_cache_hits

            reason = self.compile_reason(key)
            hits_before = persistent_cache_hits()
            traced, lowered, executable, phases = self.stages(args, should_stop)
            self._executables[key] = executable
            self.n_compiles += 1
            stages = (traced, lowered, executable)
            timing = dict(compiled=True, trace_ms=phases["trace"], lower_ms=phases["lower"],
                          compile_ms=phases["compile"], compile_reason=reason, compile_phases=phases,
                          persistent_cache_hit=persistent_cache_hits() > hits_before)
        self._last_key = key
        dynamic = tuple(a for i, a in enumerate(args) if i not in p.static_argnums)
        t0 = time.perf_counter()
        out = self._guard("execute", lambda: jax.block_until_ready(executable(*dynamic)), None)
        execute_ms = (time.perf_counter() - t0) * 1000
        compile_ms = sum(timing.get("compile_phases", {}).values())
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
    """The :class:`Summary` of a program run (see :class:`RunResult` for how its fields are used)."""
    steady = [r.wall_ms for r in records if not r.compiled]
    compiles = [r for r in records if r.compiled]
    return Summary(mode=mode, n_tokens=0, ttft_ms=records[0].wall_ms if records else None,
                   steady_decode_ms=statistics.median(steady) if steady else None, decode_tokens_per_s=None,
                   overall_tokens_per_s=0.0, total_ms=total_ms,
                   compile_ms=sum(r.compile_total_ms for r in compiles), n_compiles=len(compiles),
                   n_calls=len(records))


def _run(runner: ProgramRunner, arg_list: Sequence[tuple], mode: str, should_stop: StopFn,
         on_record: RecordFn) -> RunResult:
    records: list[CallRecord] = []
    stages = None
    out = None
    stopped = False
    static_values: dict[int, list[Any]] = {}
    t0 = time.perf_counter()
    for i, args in enumerate(arg_list):
        if should_stop is not None and should_stop():
            stopped = True
            break
        try:
            outcome = runner.call(args, i, mode, should_stop)
        except ProgramStopped:
            stopped = True
            break
        records.append(outcome.record)
        for k in runner.prepared.static_argnums:
            if k < len(args):
                static_values.setdefault(k, []).append(args[k])
        out = outcome.outputs
        if stages is None and outcome.stages is not None:
            stages = outcome.stages
        if on_record is not None:
            on_record(outcome.record)
    total = (time.perf_counter() - t0) * 1000
    return RunResult(runner.prepared.entry.name, mode, records, program_summary(mode, records, total), stopped,
                     out, stages, static_values=static_values)


def run_calls(prepared: PreparedCall, n_calls: int = 10, mode: str = JIT, should_stop: StopFn = None,
              on_record: RecordFn = None, runner: ProgramRunner | None = None) -> RunResult:
    """``n_calls`` calls of the entry point with its prepared arguments, ``mode`` :data:`JIT` or
    :data:`NO_JIT`. ``should_stop`` is checked before every call and on every user line while tracing (or
    running, in no-jit); ``on_record`` gets each record as it is made. Pass a ``runner`` to reuse its
    executables. Raises :class:`ProgramError` for an error in the program (records so far are lost: the
    caller keeps the last good result)."""
    runner = runner or ProgramRunner(prepared)
    return _run(runner, [prepared.args] * n_calls, mode, should_stop, on_record)


def run_arg_list(prepared: PreparedCall, arg_list: Sequence[tuple], mode: str = JIT, should_stop: StopFn = None,
                 on_record: RecordFn = None, runner: ProgramRunner | None = None) -> RunResult:
    """One call per argument tuple of ``arg_list`` (every positional argument, as ``prepared.args``), e.g.
    from :func:`static_value_args`; otherwise as :func:`run_calls`."""
    return _run(runner or ProgramRunner(prepared), arg_list, mode, should_stop, on_record)


_ARG_NAME = re.compile(r"^\s*([A-Za-z_]\w*|\d+)\s*=(?!=)")


def parse_static_values(text: str) -> tuple[str | None, list[Any]]:
    """``"3,4,4"`` → ``(None, [3, 4, 4])``; ``"n=3,4"`` (or ``"1=3,4"``: by user index) → ``("n", [3, 4])``.
    Values are Python literals (``3``, ``2.5``, ``True``, ``'relu'``, ``(2, 3)``) or bare words taken as
    strings (``relu,gelu``); each must be hashable, as a static argument must. Raises :class:`SpecError`."""
    m = _ARG_NAME.match(text)
    name, rest = (m.group(1), text[m.end():]) if m else (None, text)
    rest = rest.strip()
    if not rest:
        raise SpecError(f"Static values {text!r}: give one value per call, e.g. 3,4,4 or n=3,4,4.")
    try:
        values = list(ast.literal_eval(f"[{rest}]"))
    except (ValueError, SyntaxError, TypeError):
        words = [w.strip() for w in rest.split(",")]
        if not all(w.isidentifier() for w in words):
            raise SpecError(f"Static values {text!r}: use Python literals separated by commas "
                            "(3,4,4 · 'relu','gelu' · (2,3),(4,6)).") from None
        values = words
    for v in values:
        try:
            hash(v)
        except TypeError:
            raise SpecError(f"Static value {v!r} is not hashable (a static argument must be): "
                            "write a tuple instead of a list.") from None
    if not values:
        raise SpecError(f"Static values {text!r}: give one value per call.")
    return name, values


def static_value_args(prepared: PreparedCall, varied: Sequence[tuple[str | None, Sequence[Any]]]) -> list[tuple]:
    """Per call, the prepared arguments with each varied static argument set to that call's value.

    ``varied``: ``(argument, values)`` pairs as :func:`parse_static_values` returns them; the argument is a
    parameter name or a user index, ``None`` when the entry has exactly one static argument. Every list has
    one value per call (the same length). Raises :class:`SpecError` for an unknown or non-static argument
    or lists of different lengths."""
    off = prepared.user_offset
    static = sorted(i - off for i in prepared.static_argnums if i >= off)

    def label(k: int) -> str:
        name = prepared.param_name(k + off)
        return f"{name} ({k})" if name else str(k)

    listed = ", ".join(label(k) for k in static) or "none"
    resolved: dict[int, Sequence[Any]] = {}
    for name, values in varied:
        if name is None:
            if len(static) != 1:
                raise SpecError(f"{prepared.entry.name} has {len(static)} static arguments ({listed}): name the "
                                "one to vary, e.g. n=3,4,4.")
            k = static[0]
        else:
            k = prepared.user_index(str(name))
        if k not in static:
            raise SpecError(f"Argument {label(k)} of {prepared.entry.name} is not static (its static arguments: "
                            f"{listed}); make it static (static_argnames in the file, or --static {k}).")
        if k in resolved:
            raise SpecError(f"Static argument {label(k)} is varied twice.")
        resolved[k] = list(values)
    lengths = {len(v) for v in resolved.values()}
    if len(lengths) > 1:
        raise SpecError("Every static argument varied needs one value per call: the lists differ in length ("
                        + ", ".join(f"{label(k)}: {len(v)}" for k, v in resolved.items()) + ").")
    n_calls = lengths.pop() if lengths else 0
    calls = []
    for c in range(n_calls):
        args = list(prepared.args)
        for k, values in resolved.items():
            args[off + k] = values[c]
        calls.append(tuple(args))
    return calls


def compare_jit(prepared: PreparedCall, n_calls: int = 10, should_stop: StopFn = None,
                on_record: RecordFn = None) -> tuple[RunResult, RunResult]:
    """The jit run, then the no-jit (op-by-op) run of the same calls: two runs for one plot."""
    jit = run_calls(prepared, n_calls, JIT, should_stop, on_record)
    if jit.stopped:
        return jit, RunResult(prepared.entry.name, NO_JIT, [], program_summary(NO_JIT, [], 0.0), True)
    return jit, run_calls(prepared, n_calls, NO_JIT, should_stop, on_record)


def bucket_size(n: int) -> int:
    """The power-of-two bucket of ``n`` (≥ 1): 1, 2, 4, 4, 8, 8, 8, 8, 16, …"""
    return 1 << max(0, n - 1).bit_length()


def parse_sweep(text: str) -> list[int] | list[ArraySpec]:
    """``"1:16"`` (1 to 16), ``"1:64:4"`` (step 4), ``"3,5,9"`` → sizes of the swept axis; a list of array
    specs ``"f32[1,128], f32[4,128]"`` → whole shapes. Raises :class:`SpecError`."""
    text = text.strip()
    if "[" in text:
        specs = parse_spec(text)
        if not all(isinstance(s, ArraySpec) for s in specs):
            raise SpecError(f"Sweep {text!r}: give sizes (1:16) or array specs (f32[1,128], f32[2,128]).")
        return list(specs)
    try:
        if ":" in text:
            parts = [int(p) for p in text.split(":")]
            start, stop = parts[0], parts[1]
            step = parts[2] if len(parts) > 2 else 1
            sizes = list(range(start, stop + 1, step))
        else:
            sizes = [int(p) for p in text.replace(" ", "").split(",") if p]
    except (ValueError, IndexError):
        raise SpecError(f"Sweep {text!r}: use START:STOP[:STEP], a comma list of sizes, or array specs.") from None
    if not sizes or min(sizes) < 1:
        raise SpecError(f"Sweep {text!r}: sizes must be ≥ 1.")
    return sizes


def sweep_target(prepared: PreparedCall, text: str) -> tuple[int, str]:
    """Which user argument a sweep text varies, and the sweep itself: ``"x=1:16"`` / ``"1=1:16"`` name it (a
    parameter name as written or an index), a plain ``"1:16"`` takes the first argument that is an array with a
    first axis (``mlp(params, x)``: ``x``, not the dict of ``params``; issue 29, flaw 11). Raises
    :class:`SpecError` for an unknown name or when no argument is an array."""
    target, sep, rest = text.partition("=")
    if sep and target.strip() and target.strip()[0] not in "[(":
        return prepared.user_index(target.strip()), rest.strip()
    user = prepared.args[prepared.user_offset:]
    for i, value in enumerate(user):
        if prepared.user_offset + i not in prepared.static_argnums and getattr(value, "shape", ()):
            return i, text.strip()
    raise SpecError(f"Sweep: no argument of {prepared.entry.name} is an array with a first axis "
                    f"({', '.join(describe(v) for v in user) or 'no arguments'}).")


def sweep_args(prepared: PreparedCall, sweep: Sequence[int] | Sequence[ArraySpec], bucket: bool = False,
               arg: int = 0, seed: int = 0) -> tuple[list[tuple], list[int], list[int]]:
    """Arguments of a shape sweep over user argument ``arg`` (its first axis): per size, random data of the
    argument's dtype and trailing shape (seeded), zero-padded along the first axis to :func:`bucket_size`
    when ``bucket``. Returns (argument tuples, sizes, padded sizes)."""
    import jax.numpy as jnp

    base = prepared.args[prepared.user_offset + arg]
    if not hasattr(base, "shape") or not base.shape:
        raise SpecError(f"Sweep: argument {arg} is not an array with a first axis ({describe(base)}).")
    arg_list, sizes, padded = [], [], []
    user = list(prepared.args[prepared.user_offset:])
    for k, item in enumerate(sweep):
        spec = item if isinstance(item, ArraySpec) else ArraySpec(describe(base).split("[")[0],
                                                                  (int(item), *base.shape[1:]))
        value = random_args((spec,), seed + k)[0]
        n = spec.shape[0] if spec.shape else 1
        size = bucket_size(n) if bucket else n
        if bucket and spec.shape and size != n:
            value = jnp.pad(value, [(0, size - n)] + [(0, 0)] * (value.ndim - 1))
        user[arg] = value
        arg_list.append(prepared.args[: prepared.user_offset] + tuple(user))
        sizes.append(n)
        padded.append(size)
    return arg_list, sizes, padded


def run_sweep(prepared: PreparedCall, sweep: Sequence[int] | Sequence[ArraySpec], bucket: bool = False,
              arg: int = 0, should_stop: StopFn = None, on_record: RecordFn = None,
              runner: ProgramRunner | None = None) -> RunResult:
    """A shape sweep (jit): one call per size in ``sweep`` (see :func:`sweep_args`). Without ``bucket`` it
    compiles once per new shape; with ``bucket`` once per power-of-two bucket. ``mode`` of the records:
    ``"jit"`` or ``"jit, bucketed"``."""
    arg_list, sizes, padded = sweep_args(prepared, sweep, bucket, arg)
    result = _run(runner or ProgramRunner(prepared), arg_list, BUCKETED if bucket else JIT, should_stop, on_record)
    result.sizes, result.padded_sizes = sizes[: len(result.records)], padded[: len(result.records)]
    return result


def compare_sweep(prepared: PreparedCall, sweep: Sequence[int] | Sequence[ArraySpec], arg: int = 0,
                  should_stop: StopFn = None, on_record: RecordFn = None) -> tuple[RunResult, RunResult]:
    """The sweep as is, then padded to power-of-two buckets (seed 004's lesson): two runs for one plot."""
    plain = run_sweep(prepared, sweep, False, arg, should_stop, on_record)
    if plain.stopped:
        return plain, RunResult(prepared.entry.name, BUCKETED, [], program_summary(BUCKETED, [], 0.0), True)
    return plain, run_sweep(prepared, sweep, True, arg, should_stop, on_record)
