"""The structural HLO diff (issue 58): renamed or reordered instructions are not changes; an extra op is."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from app.core.inspect.hlo_diff import diff_hlo, parse_hlo, structural_fingerprint

GPU_HLO = Path(__file__).parents[2] / "fixtures" / "gpu" / "h200-pydoc-llama-decode.hlo.txt.gz"

A = """HloModule jit_f

%fused (p0: f32[4]) -> f32[4] {
  %p0 = f32[4]{0} parameter(0)
  %s = f32[4]{0} sine(%p0), metadata={op_name="sin" source_file="/x/model.py" source_line=3}
  ROOT %m = f32[4]{0} multiply(%s, %s)
}

ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %fusion.12 = f32[4]{0} fusion(%x), kind=kLoop, calls=%fused
  %n = f32[4]{0} negate(%y)
  ROOT %add.1 = f32[4]{0} add(%fusion.12, %n)
}
"""


def _renamed(text: str) -> str:
    """Every ``%name.N`` numbered anew (``%fusion.12`` → ``%fusion.19``), constants untouched."""
    return re.sub(r"(%[A-Za-z_][\w\-]*)\.(\d+)", lambda m: f"{m.group(1)}.{int(m.group(2)) + 7}", text)


def test_parse_reads_computations_instructions_and_sources():
    m = parse_hlo(A)
    assert m.name == "jit_f" and m.entry == "main" and list(m.computations) == ["fused", "main"]
    fusion = m.computations["main"].ops[2]
    assert (fusion.opcode, fusion.kind, fusion.calls, fusion.operands) == ("fusion", "kLoop", ("fused",), ("x",))
    assert m.computations["fused"].ops[1].source == "model.py:3"


def test_renamed_and_reordered_instructions_are_not_changes():
    b = _renamed(A).replace("%fused", "%fused_computation.3")
    lines = b.split("\n")
    i, j = lines.index("  %x = f32[4]{0} parameter(0)"), next(k for k, s in enumerate(lines) if "negate" in s)
    lines.insert(i + 2, lines.pop(j))  # negate moved before the fusion
    d = diff_hlo(A, "\n".join(lines))
    assert d.same and d.changes == [] and d.matched == 8
    assert d.summary().startswith("the same optimized HLO")


def test_a_changed_op_inside_a_fusion_is_named_with_its_source():
    d = diff_hlo(A, A.replace("sine(%p0)", "cosine(%p0)"))
    assert [(c.change, c.op.opcode, c.fusion, c.source) for c in d.changes] == [
        ("changed", "cosine", "fusion.12", "model.py:3")]
    assert d.fusions == ["fusion.12"]
    added = diff_hlo(A, A.replace("ROOT %add.1 = f32[4]{0} add(%fusion.12, %n)",
                                  "%add.1 = f32[4]{0} add(%fusion.12, %n)\n  ROOT %e = f32[4]{0} exponential(%add.1)"))
    assert [(c.change, c.op.opcode) for c in added.changes] == [("added", "exponential")]


def test_the_gpu_capture_renamed_diffs_to_nothing():
    text = gzip.open(GPU_HLO, "rt").read()
    d = diff_hlo(text, _renamed(text))
    assert d.same and d.matched == d.n_a > 1000
    # the fingerprint the settings race marks "same optimized HLO" by follows the same matching
    assert structural_fingerprint(text) == structural_fingerprint(_renamed(text))


def test_the_structural_fingerprint_is_the_same_in_another_process_and_changes_with_an_op():
    import subprocess
    import sys

    code = ("import sys; from app.core.inspect.hlo_diff import structural_fingerprint; "
            "print(structural_fingerprint(sys.stdin.read()))")
    other = subprocess.run([sys.executable, "-c", code], input=A, capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": "12345", "PYTHONPATH": str(Path(__file__).parents[3])})
    assert other.stdout.strip() == structural_fingerprint(A) == structural_fingerprint(_renamed(A))
    assert structural_fingerprint(A.replace("negate(", "abs(")) != structural_fingerprint(A)


def test_compiled_programs_on_cpu():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    x = jnp.ones((8, 4), jnp.float32)

    def f(x):
        return jnp.sin(x) @ x.T + 1.0

    def g(x):
        return jnp.cos(jnp.sin(x)) @ x.T + 1.0

    ta, tb = (jax.jit(fn).lower(x).compile().as_text() for fn in (f, g))
    assert diff_hlo(ta, _renamed(ta)).same
    d = diff_hlo(ta, tb)
    assert [(c.change, c.op.opcode) for c in d.changes] == [("added", "cosine")]
    assert d.changes[0].source.startswith("test_hlo_structural_diff.py:") and len(d.fusions) == 1
