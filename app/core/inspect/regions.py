"""The regions of control-flow equations the source map walks into (issue 41): ``while`` (cond, body), ``scan``
(body), ``cond`` (one region per branch), a nested ``jit`` with user code (its body; a library's jitted helper such
as torchax's ``_where`` stays one equation), ``custom_jvp_call`` and ``checkpoint``; which outer values each
region's inputs stand for; which StableHLO op holds them. Duck-typed over jaxpr equations: no JAX import here."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from types import CodeType
from typing import TYPE_CHECKING, Any, Protocol, cast

from app.core.jax_private import is_user_filename, open_jaxpr

if TYPE_CHECKING:
    from jax.extend.core import Jaxpr, JaxprEqn

#: JAX's equation parameter holding the body of a ``scan``, a nested ``jit`` and a ``checkpoint``.
JAXPR_PARAM = "jaxpr"
#: Control-flow primitives whose regions the map walks into: primitive → ``(parameter, region)`` in lowering
#: order (StableHLO prints a ``while``'s ``cond`` region before its ``body``); a tuple parameter (``cond``'s
#: ``branches``) is one region per jaxpr in it, ``branch0``, ``branch1``, …
REGIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "while": (("cond_jaxpr", "cond"), ("body_jaxpr", "body")), "scan": ((JAXPR_PARAM, "body"),),
    "cond": (("branches", "branch"),), "jit": ((JAXPR_PARAM, "body"),), "pjit": ((JAXPR_PARAM, "body"),),
    "custom_jvp_call": (("call_jaxpr", "body"),), "checkpoint": ((JAXPR_PARAM, "body"),),
}
#: The StableHLO op that holds a control-flow primitive's regions (scan lowers to a ``while``, cond to a ``case``).
REGION_OPS = {"while": ("while", "scan"), "case": ("cond",)}
CALLS = ("jit", "pjit")


class JaxTraceback(Protocol):
    """What is read of an equation's traceback (``jaxlib``'s ``Traceback``, shipped without type stubs): its raw
    frames ``(code objects, last instruction offsets)`` and its frames (``line_num``, ``function_name``)."""

    def raw_frames(self) -> tuple[list[CodeType], list[int]]: ...

    @property
    def frames(self) -> Sequence[Any]: ...


class Located(Protocol):
    """Where an equation stands (what :func:`inherit` reads and sets of an
    :class:`app.core.inspect.source_map.EquationInfo`)."""

    scope: str
    module: str
    file: str
    line: int
    function: str


def region_inputs(eqn: JaxprEqn, param: str) -> list[Any]:
    """The outer variables (or literals) a region's inputs stand for: a ``while``'s ``cond_jaxpr`` takes its
    cond consts and the carry, its ``body_jaxpr`` its body consts and the carry (``jax.lax.while_p``); a ``cond``
    branch the operands after the branch index; the others (scan: consts, carry, xs) the equation's inputs."""
    ins = list(eqn.invars)
    if param == "branches":
        return ins[1:]
    if param not in ("cond_jaxpr", "body_jaxpr"):
        return ins
    cn, bn = int(eqn.params.get("cond_nconsts", 0)), int(eqn.params.get("body_nconsts", 0))
    carry = ins[cn + bn:]
    return ins[:cn] + carry if param == "cond_jaxpr" else ins[cn:cn + bn] + carry


def _has_user_frames(jaxpr: Jaxpr) -> bool:
    return any(is_user_filename(code.co_filename) for eqn in jaxpr.eqns
               for code in cast("JaxTraceback", eqn.source_info.traceback).raw_frames()[0])


def region_jaxprs(eqn: JaxprEqn) -> Iterator[tuple[Any, str, str, str]]:
    """``(open jaxpr, parameter, parameter key, label)`` per region of ``eqn`` (none for other primitives): the key
    names it in the printed jaxpr (``body_jaxpr``, ``branches[1]``), the label in :attr:`EquationInfo.region`
    (``body``, ``branch1``, a nested jit's name ``inner`` — its private StableHLO function ``@inner``)."""
    prim = eqn.primitive.name
    for param, name in REGIONS.get(prim, ()):
        value = eqn.params.get(param)
        many = isinstance(value, (tuple, list))
        subs = [open_jaxpr(v) for v in (value if many else [] if value is None else [value])]
        if prim in CALLS and not any(_has_user_frames(s) for s in subs):
            continue  # a library's jitted helper: it stays one equation at its call
        for k, sub in enumerate(subs):
            key, label = (f"{param}[{k}]", f"{name}{k}") if many else (param, name)
            yield sub, param, key, str(eqn.params.get("name", label)) if prim in CALLS else label


def inherit(info: Located, call: Located) -> None:
    """An equation of a nested ``jit``'s body (``call``: that jit's equation): JAX traced the body with a fresh
    name stack, so its scope continues the call's (as the HLO's ``op_name`` does); an equation without a user frame
    stands at the line that called the jit."""
    info.scope = "/".join(s for s in (call.scope, info.scope) if s)
    if not info.file:
        info.module, info.file, info.line, info.function = call.module, call.file, call.line, call.function
