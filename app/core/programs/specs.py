"""Argument specs: ``f32[1024,1024]``, ``i32[8]``, ``bf16[2,3]``, Python scalars, and pytrees of them written as a
Python literal (tuple / list / dict), e.g. ``(f32[8,128], {"w": f32[128,128], "b": f32[128]}, 3)``.

Parsing never evaluates code: the text is parsed with :mod:`ast` and only literals, containers and
``dtype[dims]`` subscripts are accepted (the same safety as :func:`ast.literal_eval`). :func:`random_args`
turns a parsed spec into arrays of those shapes (seeded), :func:`describe` writes a value back as a spec.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from app.core.errors import PlaygroundError

#: Spec dtype names → numpy dtype names (``bf16`` is ``ml_dtypes.bfloat16``, as in jaxprs).
DTYPES = {
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64", "bool": "bool",
}
_SHORT = {v: k for k, v in DTYPES.items()}


class SpecError(PlaygroundError):
    """An argument spec could not be parsed (unknown dtype, non-integer dimension, code instead of a literal)."""


@dataclass(frozen=True)
class ArraySpec:
    """One array argument: ``dtype`` a key of :data:`DTYPES` (``"f32"``), ``shape`` a tuple of ints ≥ 0."""

    dtype: str
    shape: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.dtype}[{','.join(map(str, self.shape))}]"


def parse_spec(text: str) -> Any:
    """Parse an argument spec into a pytree of :class:`ArraySpec` and Python scalars.

    A spec that is not a tuple is one argument; the result is always the tuple of positional arguments:
    ``"f32[8]"`` → ``(ArraySpec("f32", (8,)),)``; ``"f32[8], 3"`` → ``(ArraySpec(...), 3)``.
    Raises :class:`SpecError` with the offending part.
    """
    text = text.strip()
    if not text:
        return ()
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise SpecError(f"Argument spec {text!r} is not a Python literal: {exc.msg}.") from None
    value = _convert(node, text)
    return value if isinstance(node, ast.Tuple) else (value,)


def _convert(node: ast.AST, text: str) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool, str, type(None))):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _convert(node.operand, text)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Tuple):
        return tuple(_convert(e, text) for e in node.elts)
    if isinstance(node, ast.List):
        return [_convert(e, text) for e in node.elts]
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise SpecError("Argument spec: '**' is not allowed in a dict.")
        return {_convert(k, text): _convert(v, text) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        name = node.value.id
        if name not in DTYPES:
            raise SpecError(f"Unknown dtype {name!r} in argument spec: use one of {', '.join(DTYPES)}.")
        dims_node = node.slice
        dims = dims_node.elts if isinstance(dims_node, ast.Tuple) else [dims_node]
        shape = []
        for d in dims:
            if not (isinstance(d, ast.Constant) and isinstance(d.value, int) and not isinstance(d.value, bool)
                    and d.value >= 0):
                raise SpecError(f"Dimension {ast.get_source_segment(text, d)!r} of {name}[…] must be an integer ≥ 0.")
            shape.append(d.value)
        return ArraySpec(name, tuple(shape))
    if isinstance(node, ast.Name) and node.id in DTYPES:
        return ArraySpec(node.id, ())
    segment = ast.get_source_segment(text, node) or type(node).__name__
    raise SpecError(f"Argument spec: {segment!r} is not a literal or a dtype[dims] array (e.g. f32[8,128]).")


def random_args(spec: object, seed: int = 0) -> Any:
    """Arrays for a parsed spec: floats from a standard normal, integers in [0, 10), bools uniform; scalars
    and other leaves kept as they are. Same ``seed`` → same data. Returns the same pytree with
    ``jax.Array`` leaves (host-generated with NumPy, then ``jax.numpy.asarray``)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    rng = np.random.default_rng(seed)

    def make(leaf: object) -> Any:
        if not isinstance(leaf, ArraySpec):
            return leaf
        dtype = jnp.dtype(DTYPES[leaf.dtype])
        if jnp.issubdtype(dtype, jnp.floating):
            data = rng.standard_normal(leaf.shape, dtype=np.float32)
        elif dtype == jnp.bool_:
            data = rng.integers(0, 2, leaf.shape).astype(bool)
        else:
            data = rng.integers(0, 10, leaf.shape)
        return jnp.asarray(data, dtype=dtype)

    return jax.tree_util.tree_map(make, spec, is_leaf=lambda x: isinstance(x, ArraySpec))


def short_dtype(dtype: object) -> str:
    """``float32`` (or ``torch.float32``) → ``f32`` (the jaxpr spelling); unknown dtypes keep their name."""
    name = str(dtype).removeprefix("torch.")
    return _SHORT.get(name, name)


def describe(value: object) -> str:
    """A value as a spec: an array → ``f32[7,128]``; a Python scalar → its repr; else its type name."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{short_dtype(dtype)}[{','.join(str(int(d)) for d in shape)}]"
    if isinstance(value, (int, float, bool, str, type(None))):
        return repr(value)
    return type(value).__name__
