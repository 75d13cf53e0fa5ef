"""Register Hugging Face KV-cache classes as pytrees with JAX and with torch.

``jax.jit`` needs every input and output to be a pytree, and torchax converts arguments with torch's own
pytree, so each cache class is registered with **both** ``jax.tree_util`` and ``torch.utils._pytree``
(google/torchax ``docs/``: jax.jit needs pytrees; torchax.interop converts arguments with torch's pytree).

Flattening decides by *value kind*, never by ``isinstance(v, jax.Array)``: plain static Python values
(``bool``/``int``/``float``/``str``/``None``/``torch.dtype``/``torch.device``/``type`` and lists, tuples or
dicts of them) become hashable aux data; every other attribute (tensors, arrays, nested layers, lists of
layers) is a child. JAX re-flattens with placeholder leaves when an AOT ``Compiled`` object is called, so a
type test on leaves would give a different treedef and a recompile.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any, Protocol

_STATIC_SCALARS = (bool, int, float, str, type(None), type)
_registered: set[type] = set()
_lock = threading.Lock()


def _is_static(value: object) -> bool:
    import torch

    if isinstance(value, _STATIC_SCALARS) or isinstance(value, (torch.dtype, torch.device)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_static(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, (str, int)) and _is_static(v) for k, v in value.items())
    return False


def _freeze(value: object) -> Any:
    """A hashable, comparable stand-in for a static value (lists and dicts become tagged tuples)."""
    if isinstance(value, list):
        return ("__list__", tuple(_freeze(v) for v in value))
    if isinstance(value, tuple):
        return ("__tuple__", tuple(_freeze(v) for v in value))
    if isinstance(value, dict):
        return ("__dict__", tuple((k, _freeze(v)) for k, v in value.items()))
    return value


def _thaw(value: object) -> Any:
    if isinstance(value, tuple) and len(value) == 2 and value[0] in ("__list__", "__tuple__", "__dict__"):
        tag, items = value
        if tag == "__list__":
            return [_thaw(v) for v in items]
        if tag == "__tuple__":
            return tuple(_thaw(v) for v in items)
        return {k: _thaw(v) for k, v in items}
    return value


def _flatten(obj: object) -> tuple[list[Any], tuple]:
    static, child_keys, children = [], [], []
    for key in sorted(vars(obj)):
        value = vars(obj)[key]
        if _is_static(value):
            static.append((key, _freeze(value)))
        else:
            child_keys.append(key)
            children.append(value)
    return children, (type(obj), tuple(child_keys), tuple(static))


def _unflatten(aux: tuple, children: Iterable[object]) -> Any:
    cls, child_keys, static = aux
    obj = cls.__new__(cls)
    for key, value in static:
        setattr(obj, key, _thaw(value))
    for key, value in zip(child_keys, children):
        setattr(obj, key, value)
    return obj


def _register(cls: type) -> None:
    import jax
    import torch.utils._pytree as torch_pytree

    def jax_flatten(obj):
        return _flatten(obj)

    def jax_unflatten(aux, children):
        return _unflatten(aux, children)

    def torch_flatten(obj):
        return _flatten(obj)

    def torch_unflatten(children, aux):
        return _unflatten(aux, children)

    jax.tree_util.register_pytree_node(cls, jax_flatten, jax_unflatten)
    torch_pytree.register_pytree_node(
        cls,
        torch_flatten,
        torch_unflatten,
        serialized_type_name=f"torchax_playground.{cls.__module__}.{cls.__qualname__}",
    )


def _all_subclasses(base: type) -> set[type]:
    found, stack = set(), [base]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                stack.append(sub)
    return found


def register_cache_pytrees() -> int:
    """Register every ``transformers.cache_utils.Cache`` and ``CacheLayerMixin`` subclass (idempotent).

    Safe to call repeatedly and from any thread; classes defined after an earlier call are picked up by the
    next one. Returns the number of classes newly registered.
    """
    from transformers import cache_utils

    bases = [cache_utils.Cache, cache_utils.CacheLayerMixin]
    extra = getattr(cache_utils, "LinearAttentionCacheLayerMixin", None)
    if extra is not None:
        bases.append(extra)
    new = 0
    with _lock:
        for base in bases:
            for cls in {base} | _all_subclasses(base):
                if cls in _registered:
                    continue
                _register(cls)
                _registered.add(cls)
                new += 1
    return new


class TreeDef(Protocol):
    """What :class:`FlatTree` reads of a ``jax.tree_util.PyTreeDef``: the tree rebuilt from its leaves."""

    def unflatten(self, leaves: Iterable[object], /) -> Any: ...


class FlatTree:
    """A pytree carried as ``(leaves, treedef)``: flattening it costs one Python call instead of one per
    custom node. Jitted steps take and return the KV cache as a ``FlatTree`` (a 12-layer cache is 13
    custom nodes, flattened several times per decode step) and rebuild the HF object inside the trace.
    """

    __slots__ = ("leaves", "treedef")

    def __init__(self, leaves: list[Any], treedef: TreeDef) -> None:
        self.leaves = leaves
        self.treedef = treedef

    @classmethod
    def of(cls, tree: object) -> FlatTree:
        import jax

        leaves, treedef = jax.tree_util.tree_flatten(tree)
        return cls(leaves, treedef)

    def unflatten(self) -> Any:
        return self.treedef.unflatten(self.leaves)


def _register_flat_tree() -> None:
    import jax

    jax.tree_util.register_pytree_node(
        FlatTree, lambda f: (f.leaves, f.treedef), lambda treedef, leaves: FlatTree(list(leaves), treedef)
    )


_register_flat_tree()
