"""Recover the ``torch.nn.Module`` path (e.g. ``model.layers.3.self_attn``) of each jaxpr equation from its
traceback. No Qt; reads JAX tracebacks and, optionally, the PyTorch model's module tree.

How it works (and why): inside ``jax.jit`` tracing a forward hook cannot open a name scope without
changing the model, and JAX tracebacks keep code objects and instruction offsets, not frame objects, so the
``self`` of each ``forward`` is not available. What the traceback does give, for every equation, is the
stack of Python frames. So:

1. Module frames are the frames of ``<Class>.forward`` (``co_qualname``, Python ≥ 3.11) whose class is a
   module class of the model (any ``<Class>.forward`` when no model is given). Only module frames *outside
   or at* the equation's user frame count (torch's ``Linear.forward`` is below the model line that called
   it, so a linear stays in ``self_attn`` at the ``self.q_proj(…)`` line).
2. The outermost module frame is the root (path ``""``). Each further frame is a child of the previous one,
   called from the parent frame's current line. The child's attribute name is found, in order:
   a. the parent has exactly one child (ModuleList/ModuleDict entries included) of that class;
   b. the call-site source line mentions exactly one of those candidates as ``self.<name>``
      (``self.q_proj(hidden_states)``, ``self.mlp(…)``);
   c. otherwise (``for layer in self.layers: layer(…)``, ``self.down_proj(self.act_fn(self.gate_proj(x)) *
      self.up_proj(x))``) by call order: the k-th *invocation* of a child of that class under this parent is
      the k-th candidate in registration order. A new invocation starts when the call-site instruction in
      the parent changes, when the child's own instruction offset goes backwards (the next loop iteration),
      or when equations outside that child came in between.
   Without a model, (b) uses any single ``self.<name>(`` on the call line and (c) gives ``<Class>.<k>``.
3. Numeric path components (``layers.3``) mark repeated layers; :func:`fold_path` turns them into ``*``.

Assumptions (documented limits): equations are visited in trace order; layers are called in registration
order; a child's ``forward`` contains no loop that re-enters the same parent–child pair.
"""

from __future__ import annotations

import linecache
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import CodeType

_SELF_ATTR = re.compile(r"\bself\.(\w+)")
_SELF_CALL = re.compile(r"\bself\.(\w+)\s*\(")
_NUMERIC = re.compile(r"(?<=\.)\d+(?=\.|$)|^\d+(?=\.|$)")


def fold_path(path: str) -> str:
    """``model.layers.3.self_attn`` → ``model.layers.*.self_attn`` (every numeric component)."""
    return _NUMERIC.sub("*", path)


def _join(parent: str, name: str) -> str:
    return f"{parent}.{name}" if parent else name


class ModulePathResolver:
    """Call :meth:`path` once per equation, in trace order (the invocation counters are stateful).

    ``model``: the ``torch.nn.Module`` that was traced, or ``None`` (class-name fallback, see module doc).
    """

    def __init__(self, model: Any | None = None) -> None:
        self.model = model
        self._modules: dict[str, Any] = dict(model.named_modules()) if model is not None else {}
        self._classes = {type(m).__name__ for m in self._modules.values()} or None
        self._frame_class: dict[Any, str | None] = {}
        self._candidates: dict[tuple[str, str], list[str]] = {}
        self._last: dict[tuple[str, str], tuple[int, int, int]] = {}
        self._count: dict[tuple[str, str], int] = {}
        self._serial = 0

    def _module_class(self, code: CodeType) -> str | None:
        try:
            return self._frame_class[code]
        except KeyError:  # a frame of this code not seen yet
            pass
        parts = getattr(code, "co_qualname", code.co_name).split(".")
        cls = parts[0] if len(parts) == 2 and parts[1] == "forward" and parts[0] != "<locals>" else None
        if cls is not None and self._classes is not None and cls not in self._classes:
            cls = None
        self._frame_class[code] = cls
        return cls

    def _child_candidates(self, parent: str, cls: str) -> list[str]:
        key = (parent, cls)
        if key not in self._candidates:
            mod = self._modules.get(parent)
            names: list[str] = []
            if mod is not None:
                for name, child in mod.named_children():
                    if type(child).__name__ in ("ModuleList", "ModuleDict"):
                        names += [f"{name}.{n}" for n, c in child.named_children() if type(c).__name__ == cls]
                    elif type(child).__name__ == cls:
                        names.append(name)
            self._candidates[key] = names
        return self._candidates[key]

    def _invocation(self, parent: str, cls: str, call_lasti: int, child_lasti: int) -> int:
        key = (parent, cls)
        last = self._last.get(key)
        new = (last is None or last[0] != call_lasti or child_lasti < last[1] or last[2] != self._serial - 1)
        if new:
            self._count[key] = self._count.get(key, -1) + 1
        self._last[key] = (call_lasti, child_lasti, self._serial)
        return self._count[key]

    def _name(self, parent: str, cls: str, call_file: str, call_line: int, k: int) -> str:
        text = linecache.getline(call_file, call_line)
        if self.model is None:
            attrs = set(_SELF_CALL.findall(text))
            return attrs.pop() if len(attrs) == 1 else f"{cls}.{k}"
        cands = self._child_candidates(parent, cls)
        if len(cands) == 1:
            return cands[0]
        if cands:
            mentioned = set(_SELF_ATTR.findall(text))
            hits = [c for c in cands if c.split(".")[0] in mentioned and "." not in c]
            if len(hits) == 1:
                return hits[0]
            return cands[k % len(cands)]
        return f"{cls}.{k}"

    def path(self, codes: list[Any], lastis: list[int], lines: list[int], user_index: int | None) -> str:
        """Module path of one equation. ``codes``/``lastis``/``lines``: its traceback frames innermost first
        (``Traceback.raw_frames()`` and frame line numbers); ``user_index``: index of its user frame."""
        self._serial += 1
        start = user_index if user_index is not None else 0
        chain = [i for i in range(len(codes) - 1, start - 1, -1) if self._module_class(codes[i])]
        path = ""
        for parent_i, child_i in zip(chain, chain[1:]):
            cls = self._module_class(codes[child_i])
            assert cls is not None, "the chain holds the frames of module classes only"
            k = self._invocation(path, cls, lastis[parent_i], lastis[child_i])
            path = _join(path, self._name(path, cls, codes[parent_i].co_filename, lines[parent_i], k))
        return path
