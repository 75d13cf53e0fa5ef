"""IR diff aligned by source line (issue 23): two runs' jaxpr_source / HLO lines paired by the file:line
they came from, not by text order."""

from __future__ import annotations

import pytest

from app.core.inspect.ir import StepIR
from app.core.recording import RecordedRun
from app.core.recording.compare import NO_SOURCE, ir_diff, source_keys


def _hlo(order: list[tuple[str, str, int]], dtype: str = "f32") -> str:
    body = "\n".join(f"  %{name}.{i + 7} = {dtype}[4]{{0}} {op}(%p.1), metadata={{op_name=\"jit(f)/{op}\" "
                     f"source_file=\"/home/{dtype}/proj/model.py\" source_line={line}}}"
                     for i, (name, op, line) in enumerate(order))
    return (f"HloModule jit_f\n\nENTRY %main.1 (p.1: {dtype}[4]) -> {dtype}[4] {{\n"
            f"  %p.1 = {dtype}[4]{{0}} parameter(0)\n{body}\n  ROOT %t = ({dtype}[4]) tuple(%p.1)\n}}\n")


JAXPR_A = """{ lambda ; a:f32[4]. let
    b:f32[4] = sin a           # /home/a/model.py:3:8 (f)
                               # []
    c:f32[4] = mul b 2.0:f32[] # /home/a/model.py:4:11 (f)
                               # []
    d:f32[4] = add c 1.0:f32[] # /home/a/model.py:5:11 (f)
  in (d,) }"""
JAXPR_B = """{ lambda ; a:f32[4]. let
    c:f32[4] = mul a 2.0:f32[] # /srv/b/model.py:4:11 (f)
                               # []
    b:f32[4] = cos a           # /srv/b/model.py:3:8 (f)
                               # []
    d:f32[4] = add c 1.0:f32[] # /srv/b/model.py:5:11 (f)
  in (d,) }"""


def _run(label: str, hlo: str, jaxpr_source: str, machine: str) -> RecordedRun:
    return RecordedRun(label=label, mode="jit-static", model="m", ir={"decode": StepIR(hlo=hlo, jaxpr_source=jaxpr_source)},
                       environment={"device_kind": machine, "device_count": 1, "platform": machine.lower()})


def test_source_keys_of_hlo_and_jaxpr_source():
    hlo = _hlo([("sine", "sine", 3), ("multiply", "multiply", 4)])
    keys = source_keys(hlo, "hlo")
    assert keys.count("model.py:3") == 1 and keys.count("model.py:4") == 1 and keys[0] == NO_SOURCE
    jk = source_keys(JAXPR_A, "jaxpr_source")
    assert jk == [NO_SOURCE, "model.py:3", "model.py:3", "model.py:4", "model.py:4", "model.py:5", NO_SOURCE]
    with pytest.raises(KeyError, match="source locations"):
        source_keys(hlo, "stablehlo")


def test_hlo_reordered_between_machines_aligns_by_source_line():
    a = _run("run 1", _hlo([("sine", "sine", 3), ("multiply", "multiply", 4), ("add", "add", 5)]), JAXPR_A, "CPU")
    b = _run("run 2", _hlo([("add", "add", 5), ("multiply", "multiply", 4), ("sine", "sine", 3)]), JAXPR_B, "TPU")
    by_text = ir_diff(a, b, "decode", "hlo")
    by_source = ir_diff(a, b, "decode", "hlo", align="source")
    assert "2 only in the first" in by_text  # text order sees the moved lines as removed and added
    assert "identical after normalizing" in by_source and "@@" not in by_source
    assert "4 locations, 4 the same, 0 differ · 9 lines align" in by_source.splitlines()[2]


def test_jaxpr_source_diff_names_the_line_that_changed():
    a = _run("run 1", _hlo([]), JAXPR_A, "CPU")
    b = _run("run 2", _hlo([]), JAXPR_B, "TPU")
    diff = ir_diff(a, b, "decode", "jaxpr_source", align="source")
    hunks = [line for line in diff.splitlines() if line.startswith("@@")]
    assert len(hunks) == 2 and hunks[0].startswith("@@ model.py:3 ") and hunks[1].startswith("@@ model.py:4 ")
    assert any(line.startswith("-") and "sin a" in line for line in diff.splitlines())
    assert any(line.startswith("+") and "cos a" in line for line in diff.splitlines())
    assert "model.py:5" not in "\n".join(hunks)  # the same on both: no hunk
    with pytest.raises(KeyError, match="source locations"):
        ir_diff(a, b, "decode", "stablehlo", align="source")
    with pytest.raises(KeyError, match="alignment"):
        ir_diff(a, b, "decode", "hlo", align="sideways")


def test_a_dtype_change_shows_under_each_source_line():
    a = _run("run 1", _hlo([("sine", "sine", 3), ("add", "add", 5)]), JAXPR_A, "CPU")
    b = _run("run 2", _hlo([("add", "add", 5), ("sine", "sine", 3)], dtype="bf16"), JAXPR_B, "TPU")
    diff = ir_diff(a, b, "decode", "hlo", align="source")
    hunks = [line for line in diff.splitlines() if line.startswith("@@")]
    assert {h.split()[1] for h in hunks} == {"model.py:3", "model.py:5", NO_SOURCE.split()[0]}
    assert "bf16[4]" in diff and "CPU" in diff and "TPU" in diff


def test_show_session_diff_ir_align_source(tmp_path):
    import io

    from app.cli import main
    from app.core.recording import SessionFile

    a = _run("run 1", _hlo([("sine", "sine", 3), ("add", "add", 5)]), JAXPR_A, "CPU")
    b = _run("run 2", _hlo([("add", "add", 5), ("sine", "sine", 3)], dtype="bf16"), JAXPR_B, "TPU")
    path = tmp_path / "two.session"
    SessionFile(runs=[a, b]).save(path)
    out, err = io.StringIO(), io.StringIO()
    code = main(["show-session", str(path), "--diff-ir", "decode", "--ir", "jaxpr_source", "--align", "source"],
                out=out, err=err)
    assert code == 0, err.getvalue()
    assert "aligned by source line" in out.getvalue() and "@@ model.py:3 " in out.getvalue()
