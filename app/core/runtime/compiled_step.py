"""A jitted model step with its own ahead-of-time executable cache, so every phase is timed.

``jax.jit`` hides when it traces and compiles. :class:`CompiledStep` calls the stages API explicitly —
``jit(f).trace(*args)`` → ``.lower()`` → ``.compile()`` — on a cache miss, times each phase, records why
it compiled (first call, which input changed shape), notices persistent-cache hits through
``jax.monitoring``, and keeps the stage objects for IR capture. A hit calls the cached ``Compiled``
directly, so no Python tracing happens on the steady path.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any

import jax  # noqa: TID253 - a heavy module: its users import it inside functions
from jax.tree_util import PyTreeDef  # noqa: TID253 - a heavy module: its users import it inside functions

from app.core import compile_options
from app.core.backends import CPU
from app.core.events import HOST_PARTS, CallRecord, Phase, PhaseEvent
from app.core.jax_private import holds_host_callback
from app.core.runtime import callback_clock

#: One leaf's ``(shape, dtype, weak_type)``; an argument's ``(treedef, leaves)``; a call's ``(weights, the rest)``.
LeafSig = tuple[tuple[Any, ...], str, bool]
Signature = tuple[PyTreeDef, tuple[LeafSig, ...]]
CallKey = tuple[Signature, Signature]

_CACHE_HIT_EVENT = "/jax/compilation_cache/cache_hits"
_counts = threading.local()
_listener_installed = False
_listener_lock = threading.Lock()


def _on_event(event: str, **kwargs: object) -> None:
    if event == _CACHE_HIT_EVENT:
        _counts.hits = getattr(_counts, "hits", 0) + 1


def persistent_cache_hits() -> int:
    """Compiles served by JAX's persistent cache on this thread so far (counted from JAX's monitoring event
    ``/jax/compilation_cache/cache_hits``); compare before and after a compile."""
    _install_listener()
    return getattr(_counts, "hits", 0)


def _install_listener() -> None:
    """Count persistent-cache hits per thread (listeners run in the compiling thread: jax/_src/monitoring.py)."""
    global _listener_installed
    with _listener_lock:
        if not _listener_installed:
            jax.monitoring.register_event_listener(_on_event)
            _listener_installed = True


def _leaf_sig(x: object) -> LeafSig:
    shape = tuple(getattr(x, "shape", ()))
    dtype = str(getattr(x, "dtype", type(x).__name__))
    return shape, dtype, bool(getattr(x, "weak_type", False))


def _signature(tree: object) -> Signature:
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return treedef, tuple(_leaf_sig(x) for x in leaves)


class HostMeter:
    """The host-dispatch meter of one call: consecutive ``time.perf_counter`` intervals, each closed by
    :meth:`mark` and named by one of :data:`app.core.events.HOST_PARTS` (``transfer``, ``flatten``, ``compile``,
    ``dispatch``, ``wait``, ``token``). The intervals tile the call from the meter's creation to its last mark, so
    :attr:`parts` add up to :attr:`wall_ms` by construction; what the call does between two marks belongs to the
    later one. ``leaves``: the argument leaves the call flattened (set by :meth:`CompiledStep.prepare`)."""

    __slots__ = ("_parts", "_last", "start", "leaves")

    def __init__(self, start: float | None = None) -> None:
        self.start = self._last = time.perf_counter() if start is None else start
        self._parts: dict[str, float] = {}
        self.leaves: int | None = None

    def mark(self, part: str) -> float:
        """Close the interval since the previous mark as ``part`` (added to what ``part`` already holds)."""
        now = time.perf_counter()
        self._parts[part] = self._parts.get(part, 0.0) + (now - self._last) * 1000
        self._last = now
        return now

    def carve(self, inside: str, part: str, ms: float) -> None:
        """Move ``ms`` of part ``inside`` into ``part`` (at most what ``inside`` holds): time measured within an
        interval, e.g. the host callbacks' time inside a synchronous call (``dispatch`` → ``callback``). The
        parts still add up to :attr:`wall_ms`."""
        ms = max(0.0, min(ms, self._parts.get(inside, 0.0)))
        self._parts[inside] = self._parts.get(inside, 0.0) - ms
        self._parts[part] = self._parts.get(part, 0.0) + ms

    @property
    def wall_ms(self) -> float:
        """From the meter's start to its last mark, in ms."""
        return (self._last - self.start) * 1000

    @property
    def parts(self) -> dict[str, float]:
        """Every part of :data:`HOST_PARTS`, in ms (0 for a part the call did not have)."""
        return {k: self._parts.get(k, 0.0) for k in HOST_PARTS}


def _leaf_count(key: CallKey) -> int:
    """Argument leaves of a call signature (:meth:`CompiledStep._key`)."""
    return sum(len(sig[1]) for sig in key)


#: ``(traced, lowered, compiled)``: the stage objects of one compile (``jax.stages.Traced``, ``Lowered``,
#: ``Compiled``), what :func:`app.core.inspect.ir.capture` reads.
Stages = tuple[Any, Any, Any]


@dataclass
class StepOutput:
    """What one call of a :class:`CompiledStep` returns.

    ``outputs``: the step's outputs, ready (``jax.block_until_ready``). ``record``: a
    :class:`app.core.events.CallRecord` with the timing fields set (``compiled``, ``trace_ms``,
    ``lower_ms``, ``compile_ms``, ``execute_ms``, ``persistent_cache_hit``, ``compile_reason``,
    ``compile_phases``); the caller fills in ``index``, ``mode``, ``wall_ms`` and the rest with
    ``dataclasses.replace``. ``stages``: ``(traced, lowered, compiled)`` of a compiling call, for IR
    capture outside the timed region; None when the call hit the cache.
    """

    outputs: Any
    record: CallRecord
    stages: Stages | None = None


class CompiledStep:
    """A jitted function of pytrees with an explicit executable cache keyed by input signature.

    ``fn(*args)`` must be a pure JAX function; ``donate_argnums`` as in ``jax.jit``. ``arg_names`` name the
    positional arguments (for compile reasons and IR labels); ``watched`` lists the names whose shapes are
    reported in compile reasons.
    """

    def __init__(self, fn: Callable, name: str, arg_names: tuple[str, ...], donate_argnums: tuple[int, ...] = ()):
        _install_listener()
        callback_clock.install()
        self.name = name
        self.arg_names = arg_names
        self._jitted = jax.jit(fn, donate_argnums=donate_argnums)
        self._executables: dict[Any, Any] = {}
        #: Signature of the latest call (:meth:`executable` gives what it ran).
        self.last_key: Any = None
        self._last_executable: Any = None
        #: ``id`` of each kept executable whose program calls the host on XLA:CPU (its call runs it inline).
        self._inline: set[int] = set()
        self._last_shapes: dict[str, tuple] | None = None
        self.first_reason = "first call"
        self._weights_sig: tuple[Any, Any] | None = None

    def _key(self, args: tuple) -> CallKey:
        """Signature of the call: per argument, its treedef and each leaf's (shape, dtype, weak_type).

        The weights (argument 0) are the same dict on every call of a run, so their signature is
        memoised by identity: signing 150 weight leaves in Python each step cost ~1 ms per token."""
        first, rest = args[0], args[1:]
        if self._weights_sig is None or self._weights_sig[0] is not first:
            self._weights_sig = (first, _signature(first))
        return self._weights_sig[1], _signature(rest)

    def _shapes(self, args: tuple) -> dict[str, tuple]:
        out = {}
        for name, arg in zip(self.arg_names, args):
            leaves = jax.tree_util.tree_leaves(arg)
            if len(leaves) == 1:
                out[name] = tuple(getattr(leaves[0], "shape", ()))
            else:
                out[name] = tuple(_leaf_sig(x)[0] for x in leaves)
        return out

    def _reason(self, shapes: dict[str, tuple]) -> str:
        if self._last_shapes is None:
            return self.first_reason
        changed = [
            _describe_change(name, self._last_shapes[name], shape)
            for name, shape in shapes.items()
            if name in self._last_shapes and self._last_shapes[name] != shape
        ]
        return ("new input shape: " + "; ".join(changed)) if changed else "new input structure or dtype"

    def executable(self, key: CallKey) -> Any:
        """The compiled executable (``jax.stages.Compiled``) kept for call signature ``key`` (e.g.
        :attr:`last_key`), or None."""
        return self._executables.get(key)

    def forget(self, key: CallKey) -> None:
        """Drop the executable of signature ``key``: the next call with it traces, lowers and compiles again."""
        dropped = self._executables.pop(key, None)
        self._inline.discard(id(dropped))
        self._last_executable = None
        self.last_key = None

    def input_labels(self, args: tuple) -> list[str]:
        """One readable label per flattened input leaf, e.g. ``weights['model.embed_tokens.weight']``."""
        labels = []
        for name, arg in zip(self.arg_names, args):
            for path, _ in jax.tree_util.tree_flatten_with_path(arg)[0]:
                labels.append(name + jax.tree_util.keystr(path))
        return labels

    def prepare(self, *args: object, meter: HostMeter | None = None, key: CallKey | None = None,
                reason: str | None = None) -> Generator[PhaseEvent, None, tuple[Any, dict[str, Any], Stages | None]]:
        """Generator: the executable for ``args``' signature, traced, lowered and compiled on a miss (yielding
        a start and an end :class:`PhaseEvent` per phase), without running it. Returns ``(executable, timing,
        stages)``: ``timing`` holds the :class:`CallRecord` fields of a compiling call (``compile_reason``,
        ``trace_ms``, ``lower_ms``, ``compile_ms``, ``persistent_cache_hit``, ``compile_phases``; empty on a hit),
        ``stages`` is ``(traced, lowered, compiled)`` of a compile, None on a hit. :meth:`__call__` is
        ``prepare`` then one blocking run; a mode that runs the executable elsewhere (jit-loop: on a helper
        thread, while this thread reads its tokens) calls ``prepare`` alone.

        ``meter``: marks ``flatten`` once the signature is known (and ``compile`` after a compile), and gets the
        leaves count. ``key``: the call's signature when the caller knows it (a mode feeding a step its own
        outputs back: the same shapes every call), which skips signing the arguments in Python; a wrong key makes
        the executable raise ``TypeError`` on dispatch (JAX checks the arguments' types), never a wrong result.
        ``reason``: the compile reason a compiling call records (default: what changed in the arguments' shapes)."""
        if key is None:
            key = self._key(args)
        # The same key object as the previous call's (a mode that keeps it): no hashing of its ~leaves-long tuple.
        executable = self._executables.get(key) if key is not self.last_key else self._last_executable
        self.last_key = key
        timing: dict[str, Any] = {}
        if meter is not None:
            meter.leaves = _leaf_count(key)
            meter.mark("flatten")
        if executable is not None:
            self._last_executable = executable
            return executable, timing, None
        shapes = self._shapes(args)
        timing["compile_reason"] = reason or self._reason(shapes)
        detail = f"{self.name} step"
        phases: dict[str, float] = {}
        traced = yield from _timed("tracing", detail, phases, "trace", lambda: self._jitted.trace(*args))
        lowered = yield from _timed("lowering", detail, phases, "lower", traced.lower)
        hits_before = getattr(_counts, "hits", 0)
        executable = yield from _timed("compiling", detail, phases, "compile",
                                       lambda: _compile(lowered, self.name, self._jitted))
        phases["compile"] = _observed_ms() or phases["compile"]  # a race's profiler around it is not the compile's
        timing.update(
            trace_ms=phases["trace"], lower_ms=phases["lower"], compile_ms=phases["compile"],
            persistent_cache_hit=getattr(_counts, "hits", 0) > hits_before, compile_phases=phases,
        )
        self._executables[key] = executable
        self._last_executable = executable
        if runs_inline(executable):
            self._inline.add(id(executable))
        self._last_shapes = shapes
        if meter is not None:
            meter.mark("compile")
        return executable, timing, (traced, lowered, executable)

    def __call__(self, *args: object, meter: HostMeter | None = None, key: CallKey | None = None,
                 ready: Callable[[Any], Any] | None = None, reason: str | None = None) -> Iterator[PhaseEvent | StepOutput]:
        """Generator: yields :class:`PhaseEvent` s while tracing/lowering/compiling, then one final
        :class:`StepOutput`. ``meter`` (:class:`HostMeter`) marks ``flatten``, ``compile``, ``dispatch`` (the
        executable's call returned) and ``wait`` (its outputs ready); ``key`` as in :meth:`prepare`. ``ready(out)``
        picks what to wait for (default: every output, ``jax.block_until_ready``); one output of the executable is
        enough (XLA marks all outputs of one execution ready together) and spares flattening the rest in Python.
        ``reason`` as in :meth:`prepare`.

        The host callbacks' time during the call (:mod:`app.core.runtime.callback_clock`, timestamps taken inside
        them) is the meter's ``callback`` part, carved out of ``dispatch`` when the executable runs inline
        (:func:`runs_inline`: the record's ``synchronous``, its call returns after the device finished) and out of
        ``wait`` otherwise."""
        executable, timing, stages = yield from self.prepare(*args, meter=meter, key=key, reason=reason)
        synchronous = id(executable) in self._inline
        clock = callback_clock.reading()[0]
        t0 = time.perf_counter()
        out = executable(*args)
        if meter is not None:
            meter.mark("dispatch")
        if ready is None:
            jax.block_until_ready(out)
        else:
            jax.block_until_ready(ready(out))
        t1 = meter.mark("wait") if meter is not None else time.perf_counter()
        if meter is not None:
            meter.carve("dispatch" if synchronous else "wait", "callback", callback_clock.reading()[0] - clock)
        execute_ms = (t1 - t0) * 1000
        record = CallRecord(index=0, step=self.name, mode="", input_shapes={}, wall_ms=execute_ms,
                            execute_ms=execute_ms, compiled=stages is not None, synchronous=synchronous, **timing)
        yield StepOutput(out, record, stages)


#: Test-only: seconds to sleep inside every compile (a compile that cannot be interrupted, made long on
#: purpose), read from the environment at each compile. Unset in normal use.
COMPILE_DELAY_ENV = "TORCHAX_PLAYGROUND_TEST_COMPILE_DELAY_S"


def _compile(lowered: jax.stages.Lowered, step: str, jitted: jax.stages.Wrapped) -> Any:
    delay = float(os.environ.get(COMPILE_DELAY_ENV) or 0)
    if delay > 0:
        time.sleep(delay)
    # a race's options, its compile observer
    return compile_options.run_compile(step, compile_options.module_name(jitted, step),
                                       lambda: lowered.compile(compile_options.current()))


def runs_inline(executable: jax.stages.Compiled) -> bool:
    """Whether calling ``executable`` (a ``jax.stages.Compiled``) runs it to the end before the call returns: its
    program calls the host (:func:`app.core.jax_private.holds_host_callback`, read from the compiled program, not
    from timings) and it runs on XLA:CPU, whose PJRT client runs such a program inline on the calling thread
    (measured on jax 0.12: a 120 ms program with a ``jax.debug.callback`` returned from its call after 119 ms, the
    same program without it after 0.2 ms). On a GPU or TPU the call stays asynchronous."""
    if not holds_host_callback(executable):
        return False
    try:
        shardings = jax.tree_util.tree_leaves(executable.input_shardings)
        platforms = {d.platform for s in shardings[:1] for d in s.device_set}
    except (AttributeError, TypeError, ValueError):
        return False
    return platforms == {CPU.platform}


def _observed_ms() -> float | None:
    return compile_options.observed_compile_ms()


def _timed(phase: Phase, detail: str, phases: dict[str, float], label: str, work: Callable[[], Any]):
    """Run ``work()`` between a start and an end :class:`PhaseEvent`; store its ms in ``phases[label]``."""
    yield PhaseEvent(phase, True, detail)
    t0 = time.perf_counter()
    result = work()
    phases[label] = (time.perf_counter() - t0) * 1000
    yield PhaseEvent(phase, False, detail, phases[label])
    return result


def _describe_change(name: str, old: tuple, new: tuple) -> str:
    """``input_ids (1, 5) → (1, 6)``; for a pytree argument, the first changed leaf and how many changed."""
    is_tree = any(isinstance(d, tuple) for d in old + new)
    if is_tree and len(old) == len(new):
        diffs = [i for i, (a, b) in enumerate(zip(old, new)) if a != b]
        more = f" (+{len(diffs) - 1} more leaves)" if len(diffs) > 1 else ""
        i = diffs[0]
        return f"{name} leaf {i} {_fmt(old[i])} → {_fmt(new[i])}{more}"
    if is_tree:
        return f"{name} {len(old)} → {len(new)} leaves"
    return f"{name} {_fmt(old)} → {_fmt(new)}"


def _fmt(shape: object) -> str:
    if isinstance(shape, tuple) and all(isinstance(d, int) for d in shape):
        return "(" + ", ".join(map(str, shape)) + ")"
    return str(shape)
