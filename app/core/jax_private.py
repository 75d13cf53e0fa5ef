"""Every private JAX API the app uses, in one place, each with the versions it was checked against.

JAX's public API covers tracing, lowering, compiling and profiling, but a few things the playground shows need
``jax._src``: clearing the in-memory handle of the persistent compilation cache, walking sub-jaxprs of any
primitive, telling user frames from library frames in a traceback, and compiling a parsed StableHLO module
with extra XLA options in a child process. Each wrapper below names the private symbol it reaches and the
JAX versions on which it was run:

- jax 0.10.2 (Python 3.11, the project's stack until November 2026),
- jax 0.11.2 (Python 3.12 on the lent GPU machines, with the CUDA plugin),
- jax 0.12.0.1 (Python 3.12 / 3.13, the pinned stack).

Signatures that changed between those versions are handled here, so callers never test ``jax.__version__``.
When a new JAX breaks one of them, this is the file to fix. Imports are inside the functions: importing this
module does not import JAX.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

#: The JAX versions every wrapper here was run on (see the module docstring).
CHECKED_AGAINST = ("0.10.2", "0.11.2", "0.12.0.1")


def reset_compilation_cache() -> None:
    """Drop JAX's in-memory handle of the persistent compilation cache so the next compile reopens it with the
    current ``jax_compilation_cache_dir`` (``jax._src.compilation_cache.reset_cache``; same signature in every
    checked version)."""
    from jax._src import compilation_cache

    compilation_cache.reset_cache()


def jaxprs_in_params(params: Mapping[str, Any]) -> Iterator[Any]:
    """The open jaxprs nested in an equation's parameters: ``jit``'s ``jaxpr``, ``scan``/``while`` bodies,
    ``cond`` branches, ``custom_jvp_call``, ``remat``, and (jax ≥ 0.11) ``eval_jaxpr_p``, which replaced
    ``closed_call_p`` / ``call_p`` (``jax._src.core.jaxprs_in_params``: it unwraps closed jaxprs in every
    checked version, so the walkers never name those primitives)."""
    from jax._src import core

    yield from core.jaxprs_in_params(params)


def is_literal(var: Any) -> bool:
    """Whether a jaxpr equation operand is a literal constant rather than a variable (``jax._src.core.Literal``;
    ``jax.extend.core.Literal`` is the same class)."""
    from jax._src import core

    return isinstance(var, core.Literal)


def open_jaxpr(traced_jaxpr: Any) -> Any:
    """The open ``Jaxpr`` (with ``.eqns``, ``.invars``) of what ``jax.jit(f).trace(...).jaxpr`` or
    ``jax.make_jaxpr`` returned: a ``ClosedJaxpr`` up to jax 0.10.2, a closed ``Jaxpr`` that still has
    ``.jaxpr`` and ``.consts`` since 0.11. Either way ``.jaxpr`` is the open one; an object without it is
    already open."""
    inner = getattr(traced_jaxpr, "jaxpr", None)
    return inner if inner is not None and hasattr(inner, "eqns") else traced_jaxpr


def exclude_from_tracebacks(path: str) -> None:
    """Treat frames under the directory ``path`` (or in the file ``path``) as library frames, so a jaxpr
    equation's user frame is the model's own source line (``jax._src.source_info_util.register_exclusion``)."""
    from jax._src import source_info_util

    if path.startswith("<"):  # a pseudo file name's prefix: "<frozen " (Python's frozen modules)
        source_info_util.register_exclusion(path)
        return
    source_info_util.register_exclusion(path if os.path.isfile(path) else path.rstrip(os.sep) + os.sep)


def ordered_io_effect() -> Any:
    """The effect of ``jax.experimental.io_callback(..., ordered=True)`` (``jax._src.callback._OrderedIOEffect``):
    a primitive that declares it is sequenced with every ordered callback and is allowed inside ``while_loop``
    bodies (:mod:`app.core.runtime.host_token`). Checked on jax 0.12.0.1 only."""
    from jax._src import callback

    return callback._OrderedIOEffect  # pyright: ignore[reportPrivateUsage]


def ragged_dot_lowering() -> tuple[Any, Any]:
    """``(primitive, rule)``: ``jax.lax.ragged_dot_general``'s primitive (``jax._src.lax.lax.ragged_dot_general_p``)
    and JAX's platform-independent MLIR lowering rule for it (``jax._src.interpreters.mlir._lowerings``), the
    one the CPU uses (:mod:`app.core.runtime.moe_ops` gives the CPU its own for the MoE layout and falls back to
    this one). Checked on jax 0.12.0.1 only."""
    from jax._src.interpreters import mlir
    from jax._src.lax import lax

    primitive = lax.ragged_dot_general_p
    return primitive, mlir._lowerings[primitive].rule  # pyright: ignore[reportPrivateUsage]


def distributed_client() -> Any:
    """This process's client of the coordination service ``jax.distributed.initialize()`` started
    (``jax._src.distributed.global_state.client``: ``key_value_set``, ``key_value_dir_get``; the object
    ``jax.experimental.multihost_utils`` uses), or None before it. Checked on jax 0.12.0.1 only."""
    from jax._src import distributed

    return distributed.global_state.client


def callback_op_sharding(ctx: Any) -> Any:
    """The sharding ``io_callback`` gives its custom call in lowering context ``ctx``
    (``jax._src.callback._callback_op_sharding``): the first device of a jit's device assignment, or manual (every
    device) inside ``shard_map`` with all mesh axes manual (:mod:`app.core.runtime.host_token`). Checked on jax
    0.12.0.1 only."""
    from jax._src import callback

    return callback._callback_op_sharding(  # pyright: ignore[reportPrivateUsage]
        ctx.module_context.axis_context, None, ctx.avals_out)


def time_debug_callbacks(wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    """Replace the implementation of ``jax.debug.callback``'s primitive (``jax._src.debugging.debug_callback_p``,
    its ``impl``: what both the eager call and the compiled program's callback run, looked up at each call) with
    ``wrap(impl)`` (:mod:`app.core.runtime.callback_clock` times it). Checked on jax 0.12.0.1 only."""
    from jax._src import debugging

    primitive = debugging.debug_callback_p
    primitive.def_impl(wrap(primitive.impl))


def holds_host_callback(compiled: object) -> bool:
    """Whether a ``jax.stages.Compiled``'s program calls the host (``jax.debug.callback``, ``io_callback``,
    ``pure_callback``, :mod:`app.core.runtime.host_token`): the ``has_host_callbacks`` flag of its executable's
    runner (``jax._src.interpreters.pxla.ExecuteReplicated``, set from the lowering's host callbacks); False for
    an object without one. Checked on jax 0.12.0.1 only."""
    call = getattr(getattr(compiled, "_executable", None), "unsafe_call", None)
    return bool(getattr(call, "has_host_callbacks", False))


def is_user_filename(filename: str) -> bool:
    """Whether a traceback frame belongs to user code by JAX's rule (not JAX, not an excluded directory):
    ``jax._src.source_info_util.is_user_filename``."""
    from jax._src import source_info_util

    return bool(source_info_util.is_user_filename(filename))


def compile_stablehlo_text(text: str, options: Mapping[str, Any], platform: str) -> Any:
    """Parse StableHLO ``text`` in JAX's MLIR context and compile it for one device of ``platform`` with the
    XLA compile options ``options`` (``{"xla_dump_to": …}``); returns the loaded executable
    (``.hlo_modules()[0].to_string()`` is its optimized HLO).

    Reaches ``jax._src.compiler.get_compile_options`` / ``backend_compile_and_load``,
    ``jax._src.interpreters.mlir.make_ir_context`` and ``jax._src.lib.xla_client.DeviceList``: a ``Lowered``
    cannot be pickled into a child process and ``jax.export`` wraps the module in a new one. Raises whatever
    XLA raises for bad options or a bad module (``jax.errors.JaxRuntimeError``)."""
    # (xla_client and mlir.ir below: jaxlib's modules, imported into these jax modules without a re-export)
    import jax
    from jax._src import compiler
    from jax._src.interpreters import mlir
    from jax._src.lib import xla_client as xc  # pyright: ignore[reportPrivateImportUsage]

    devices = jax.devices(platform)[:1]
    backend = devices[0].client
    with mlir.make_ir_context():
        module = mlir.ir.Module.parse(text)  # pyright: ignore[reportPrivateImportUsage]
        compile_options = compiler.get_compile_options(
            num_replicas=1, num_partitions=1, env_options_overrides=dict(options), backend=backend)
        return compiler.backend_compile_and_load(backend, module, xc.DeviceList(tuple(devices)), compile_options,
                                                 [])


def _caller_locals(function: str, file_suffix: str) -> dict[str, Any] | None:
    """The locals of the nearest frame on this thread's stack running ``function`` in a file ending with
    ``file_suffix``; None when there is none."""
    frame = sys._getframe(2)
    while frame is not None and not (frame.f_code.co_name == function
                                     and frame.f_code.co_filename.endswith(file_suffix)):
        frame = frame.f_back
    return None if frame is None else frame.f_locals


def cache_miss_arguments() -> tuple[Any, Any, tuple[str, ...] | None, Any] | None:
    """Called from a logging filter while JAX explains a tracing cache miss (``jax_explain_cache_misses``): the
    explaining frame's ``(fun, in_avals, arg_names, previous)`` — the Python function traced, this call's key
    ``((Pytree(vals, tree) | Static(value), …), kwargs)``, the names of its dynamic leaves (``DebugInfo.arg_names``)
    and the function's most recent cached key's ``in_avals`` (None when JAX never traced it). Reads the locals of
    ``jax._src.interpreters.partial_eval.explain(keys, fun, in_avals, debug_info, …)`` (jax 0.12.0.1); None when
    no such frame is on the stack (another JAX)."""
    local = _caller_locals("explain", "partial_eval.py")
    if local is None:
        return None
    fun, in_avals, dbg = local.get("fun"), local.get("in_avals"), local.get("debug_info")
    previous = None
    # by the time it logs, ``explain`` has narrowed ``keys`` to this function's keys ``[ctx, (in_avals, dbg), {}]``
    for entry in local.get("keys") or ():
        for part in entry:
            if isinstance(part, tuple) and len(part) >= 2 and type(part[1]).__name__ == "DebugInfo":
                previous = part[0]
    names = getattr(dbg, "arg_names", None)
    return fun, in_avals, tuple(names) if names is not None else None, previous


def jit_call_arguments() -> tuple[Any, tuple, dict, tuple[int, ...], tuple[str, ...]] | None:
    """Called from a ``jax.monitoring`` listener while a jitted function compiles: the call that missed the jit
    dispatch cache, ``(fun, args, kwargs, static_argnums, static_argnames)`` — the Python function, the arguments
    as passed (static values included), and its static argument numbers and names. Reads the locals of the
    ``cache_miss`` closure in ``jax/_src/pjit.py`` (``fun``, ``args``, ``kwargs``, ``jit_info``; jax 0.12.0.1);
    None when no such frame is on the stack."""
    local = _caller_locals("cache_miss", "pjit.py")
    if local is None:
        return None
    info = local.get("jit_info")
    return (local.get("fun"), tuple(local.get("args") or ()), dict(local.get("kwargs") or {}),
            tuple(getattr(info, "static_argnums", ()) or ()), tuple(getattr(info, "static_argnames", ()) or ()))
