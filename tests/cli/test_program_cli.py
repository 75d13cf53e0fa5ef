"""``torchax-playground program``: calls, jit vs no-jit, sweeps, IR, --json events, examples, errors."""

from __future__ import annotations

import io
import json

from app.cli import main

PROGRAM = '''import jax.numpy as jnp


def f(x):
    return jnp.tanh(x) * 2.0


def f_args():
    return (jnp.ones((4, 8)),)


def broken(x):
    if x.sum() > 0:
        return x
    return -x
'''


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_program_calls_print_a_table_and_a_summary(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    code, out, err = run_cli("program", f"{path}:f", "--calls", "4")
    assert code == 0, err
    assert "prog.py:f | mode jit | 4 calls" in out and "compiled: first call" in out
    assert "compiles 1" in out and "arg 0" in out


def test_program_json_emits_generate_style_call_and_summary_events(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    code, out, err = run_cli("program", str(path), "--calls", "3", "--compare-jit", "--json")
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["event"] for e in events] == ["call"] * 3 + ["summary"] + ["call"] * 3 + ["summary"]
    assert events[0]["compiled"] and events[0]["compile_reason"] == "first call" and events[0]["step"] == "f"
    assert events[3]["mode"] == "jit" and events[7]["mode"] == "no-jit" and events[3]["n_compiles"] == 1
    assert events[3]["reason"] == "calls" and events[3]["model"] == "prog.py:f"


def test_program_sweep_with_buckets_and_args_spec(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    code, out, err = run_cli("program", f"{path}:f", "--args", "f32[2,16]", "--sweep", "1:5", "--bucket")
    assert code == 0, err
    assert "sweep of 5 sizes (1…5): 5 compiles" in out
    assert "5 sizes (1…5): 4 compiles for buckets 1, 2, 4, 8" in out
    assert "new input shape: arg 0 f32[2,16] → f32[3,16]" in out


def test_program_ir_names_the_users_lines(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    code, out, err = run_cli("program", f"{path}:f", "--what", "jaxpr-source")
    assert code == 0, err
    assert f"{path}:5" in out and "tanh" in out
    code, out, _ = run_cli("program", f"{path}:f", "--what", "cost")
    assert code == 0 and "flops" in json.loads(out)


def test_program_errors_exit_2_with_the_users_line(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    code, _, err = run_cli("program", f"{path}:broken", "--args", "f32[3]")
    assert code == 2
    assert f"error: {path}:13: TracerBoolConversionError" in err
    code, _, err = run_cli("program", f"{path}:missing")
    assert code == 2 and "No entry point 'missing'" in err


def test_program_examples_list_and_run():
    code, out, _ = run_cli("program", "--list-examples")
    assert code == 0 and "05_loops" in out and "jit speed-up" in out
    code, out, err = run_cli("program", "--example", "loops", "--list")
    assert code == 0 and "python_loop" in out and "fori" in out
    code, out, err = run_cli("program", "--example", "static_argnums", "--calls", "2", "--no-jit")
    assert code == 0, err
    assert "mode no-jit" in out
