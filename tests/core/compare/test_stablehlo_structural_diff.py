"""The structural StableHLO diff (issue 58): functions, regions and ops matched by graph; renamed SSA values,
reordered independent ops and renamed private functions are not changes; a changed constant, an added op and a
changed op inside a ``while`` region are, with their source lines from the debug text."""

from __future__ import annotations

import re

import pytest

from app.core.inspect.stablehlo_diff import diff_stablehlo, parse_stablehlo

A = """module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<8x4xf32>, %arg1: tensor<8x4xf32>) -> (tensor<8x8xf32> {jax.result_info = ""}) {
    %0 = stablehlo.sine %arg0 : tensor<8x4xf32>
    %1 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
    %4 = stablehlo.add %2, %3 : tensor<8x8xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %5:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %4) : tensor<i32>, tensor<8x8xf32>
    cond {
      %c_1 = stablehlo.constant dense<3> : tensor<i32>
      %8 = stablehlo.compare LT, %iterArg, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %8 : tensor<i1>
    } do {
      %c_1 = stablehlo.constant dense<1> : tensor<i32>
      %8 = stablehlo.add %iterArg, %c_1 : tensor<i32>
      %9 = stablehlo.multiply %iterArg_0, %4 : tensor<8x8xf32>
      stablehlo.return %8, %9 : tensor<i32>, tensor<8x8xf32>
    }
    %6 = call @helper(%5#1) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %7 = "stablehlo.sort"(%6) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %10 = stablehlo.compare GT, %arg2, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %10 : tensor<i1>
    }) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %7 : tensor<8x8xf32>
  }
  func.func private @helper(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
"""


def _renamed(text: str) -> str:
    """Every SSA value renamed (``%0`` → ``%v_0``) and ``@helper`` → ``@helper_0``."""
    return re.sub(r"%(\w+)", r"%v_\1", text).replace("@helper", "@helper_0")


def _debug(text: str) -> str:
    """``text`` with a location on each op line (line N of ``model.py`` for text line N)."""
    lines = [f'#loc{i} = loc("/x/model.py":{i}:0)' for i in range(1, 40)]
    for i, s in enumerate(text.split("\n"), start=1):
        op = re.match(r"^\s*(%[\w:]+ = )?\"?(stablehlo|call|return)", s) and not s.rstrip().endswith("{")
        lines.append(f"{s} loc(#loc{i})" if op else s)
    return "\n".join(lines)


def test_parse_reads_functions_regions_arguments_and_calls():
    m = parse_stablehlo(A)
    assert m.entry == "main" and set(m.computations) == {"main", "main:5#0", "main:5#1", "main:7#0", "helper"}
    main = {op.shown: op for op in m.computations["main"].ops}
    assert main["5"].opcode == "stablehlo.while" and main["5"].calls == ("main:5#0", "main:5#1")
    assert main["6"].calls == ("helper",) and main["6"].operands == ("main:5",)
    assert main["7"].shape == "tensor<8x8xf32>"  # the generic op's type after its region
    body = m.computations["main:5#1"].ops
    assert [op.opcode for op in body[:2]] == ["parameter", "parameter"]
    assert body[-2].operands == ("main:5#1:iterArg_0", "main:4")  # a value from outside the region


def test_renamed_and_reordered_ops_are_not_changes():
    b = _renamed(A)
    lines = b.split("\n")
    i = next(k for k, s in enumerate(lines) if "stablehlo.transpose" in s)
    lines.insert(i - 1, lines.pop(i))  # the transpose before the sine: independent ops reordered
    d = diff_stablehlo(A, "\n".join(lines))
    assert d.same and d.matched == sum(len(c.ops) for c in parse_stablehlo(A).computations.values())
    assert d.summary().startswith("the same StableHLO (") and "ops matched" in d.summary()


def test_changes_inside_regions_and_functions_are_named_with_their_sources():
    b = A.replace("dense<3>", "dense<4>").replace("stablehlo.tanh %arg0", "stablehlo.logistic %arg0")
    d = diff_stablehlo(parse_stablehlo(A, _debug(A)), parse_stablehlo(b, _debug(b)))
    found = {(c.change, c.op.opcode, c.op.shown, c.source) for c in d.changes}
    assert found == {("changed", "stablehlo.constant", "c_1", "model.py:12"),
                     ("changed", "stablehlo.logistic", "0 in @helper", "model.py:30")}
    added = diff_stablehlo(A, A.replace("    return %7 : tensor<8x8xf32>\n  }\n  func",
                                        "    %11 = stablehlo.negate %7 : tensor<8x8xf32>\n"
                                        "    return %11 : tensor<8x8xf32>\n  }\n  func"))
    assert [(c.change, c.op.opcode) for c in added.changes if c.change != "changed"] == [
        ("added", "stablehlo.negate")]


def test_lowered_programs_on_cpu():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    args = (jnp.ones((8, 4)), jnp.ones((8, 4)))

    def make(k):
        def f(x, y):
            z = jnp.sin(x) @ y.T + k
            r = jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, z.sum(axis=1)))
            return jax.nn.softmax(z, axis=-1), r[1], jnp.argmax(z, axis=1), jnp.sort(z[0])
        return f

    la, lb = jax.jit(make(1.0)).lower(*args), jax.jit(make(2.0)).lower(*args)
    ta = la.as_text()
    same = diff_stablehlo(ta, _renamed(ta))
    assert same.same and same.matched > 60
    d = diff_stablehlo(parse_stablehlo(ta, la.as_text(debug_info=True)),
                       parse_stablehlo(lb.as_text(), lb.as_text(debug_info=True)))
    assert [(c.change, c.op.opcode) for c in d.changes] == [("changed", "stablehlo.constant")]
    assert d.changes[0].source.startswith("test_stablehlo_structural_diff.py:")
