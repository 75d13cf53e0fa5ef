"""The argument lists of a program run, one tuple of positional arguments per call: a shape sweep of one argument's
first axis (``1:16``, ``1:64:4``, ``3,5,9`` or array specs; zero-padded to power-of-two buckets on request) and the
values of static arguments (``n=3,4,4``: one call per value). :func:`app.core.programs.lanes.plan_lanes` builds
the runs from them; :mod:`app.core.programs.runner` makes the calls. JAX only for the sweep's random data."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Any

from app.core.programs.loader import PreparedCall
from app.core.programs.specs import ArraySpec, SpecError, describe, parse_spec, random_args

_ARG_NAME = re.compile(r"^\s*([A-Za-z_]\w*|\d+)\s*=(?!=)")


def parse_argnums(text: str) -> tuple[int, ...] | None:
    """Static argument indices as typed (the CLI's ``--static``, the window's static_argnums field):
    ``"1"`` → ``(1,)``, ``"0, 2"`` → ``(0, 2)``, ``""`` → None (the file's own). Raises :class:`SpecError`
    for anything but non-negative integers."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not all(p.isdigit() for p in parts):
        raise SpecError(f"Static argument indices {text!r}: give user argument indices, e.g. 1 or 0,2.")
    return tuple(int(p) for p in parts) if parts else None


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
