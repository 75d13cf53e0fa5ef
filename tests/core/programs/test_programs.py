"""Programs: the user's own JAX functions and nn.Modules (app.core.programs), the gallery, errors at the
user's line, stopping a stuck trace."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from app.core.programs.errors import ProgramError, ProgramStopped
from app.core.programs.gallery import example, list_examples
from app.core.programs.ir import entry_ir, ir_from_stages
from app.core.programs.lanes import compare_jit, compare_sweep, run_calls
from app.core.programs.loader import load_program
from app.core.programs.runner import (
    JIT,
    NO_JIT,
    ProgramRunner,
    bucket_size,
    parse_sweep,
)
from app.core.programs.specs import ArraySpec, SpecError, parse_spec, random_args

SMALL = '''import jax.numpy as jnp


def f(x, y):
    z = x * 2.0
    return jnp.sin(z) + y


def f_args():
    return (jnp.ones((4, 3)), jnp.zeros((4, 3)))
'''


def test_spec_parser_reads_arrays_scalars_and_pytrees():
    assert parse_spec("f32[1024,1024]") == (ArraySpec("f32", (1024, 1024)),)
    assert parse_spec("i32[8], 3, -1.5") == (ArraySpec("i32", (8,)), 3, -1.5)
    tree = parse_spec('({"w": bf16[2,3], "b": f32[3]}, [u8[4], f32], True)')
    assert tree == ({"w": ArraySpec("bf16", (2, 3)), "b": ArraySpec("f32", (3,))},
                    [ArraySpec("u8", (4,)), ArraySpec("f32", ())], True)
    args = random_args(tree, seed=1)
    assert args[0]["w"].shape == (2, 3) and str(args[0]["w"].dtype) == "bfloat16"
    assert args[1][0].dtype == np.uint8 and args[1][1].shape == ()
    np.testing.assert_array_equal(random_args(tree, seed=1)[0]["b"], args[0]["b"])  # seeded
    for bad in ("__import__('os').system('true')", "q7[3]", "f32[2.5]", "f32[n]", "lambda: 1"):
        with pytest.raises(SpecError):
            parse_spec(bad)


def test_sweep_specs_and_buckets():
    assert parse_sweep("1:4") == [1, 2, 3, 4]
    assert parse_sweep("1:9:4") == [1, 5, 9]
    assert parse_sweep("3,5") == [3, 5]
    assert parse_sweep("f32[1,8], f32[3,8]") == [ArraySpec("f32", (1, 8)), ArraySpec("f32", (3, 8))]
    assert [bucket_size(n) for n in range(1, 10)] == [1, 2, 4, 4, 8, 8, 8, 8, 16]
    with pytest.raises(SpecError):
        parse_sweep("0:3")


def test_gallery_lists_every_example_with_a_title_and_a_point():
    examples = list_examples()
    assert len(examples) >= 9
    assert all(e.title and e.point and e.path.endswith(".py") for e in examples)
    assert example("loops").name == "05_loops"


@pytest.mark.parametrize("name", [e.name for e in list_examples()])
def test_every_gallery_example_runs(name):
    program = load_program(example(name).path)
    assert program.entries
    for entry in program.entries:
        prepared = program.prepare(entry)
        result = run_calls(prepared, 3)
        assert len(result.records) == 3 and result.records[0].compiled and not result.records[2].compiled
        assert result.records[0].compile_reason == "first call"
        assert all(r.step == entry and r.mode == JIT for r in result.records)
        step_ir = ir_from_stages(result.stages, ProgramRunner(prepared))
        assert step_ir.jaxpr and step_ir.stablehlo and step_ir.hlo and step_ir.n_equations


def test_python_loop_jaxpr_is_many_times_the_fori_loop_one():
    program = load_program(example("loops").path)
    sizes = {name: entry_ir(program.prepare(name)).n_equations for name in ("python_loop", "fori", "scan")}
    assert sizes["python_loop"] >= 20 * sizes["fori"]
    assert sizes["python_loop"] >= 20 * sizes["scan"]


def test_sweep_compiles_once_per_shape_and_once_per_bucket_when_padded():
    prepared = load_program(example("static_shapes").path).prepare()
    plain, padded = compare_sweep(prepared, list(range(1, 10)))
    assert plain.n_compiles == 9 and padded.n_compiles == 5  # buckets 1, 2, 4, 8, 16
    assert plain.records[7].compile_reason == "new input shape: arg 0 f32[7,128] → f32[8,128]"
    assert padded.padded_sizes == [1, 2, 4, 4, 8, 8, 8, 8, 16] and padded.sizes == list(range(1, 10))
    assert padded.records[0].mode == "jit, bucketed" and padded.records[8].input_shapes == {"arg 0": [16, 128]}


def test_static_argument_change_recompiles_and_says_so():
    prepared = load_program(example("static_argnums").path).prepare()
    assert prepared.static_argnums == (1,)  # from the file's jax.jit(static_argnums=(1,))
    runner = ProgramRunner(prepared)
    first = runner.call(index=0)
    again = runner.call(index=1)
    changed = runner.call((prepared.args[0], 6), index=2)
    assert first.record.compiled and not again.record.compiled
    assert changed.record.compile_reason == "static argument length changed: 5 → 6"  # named as written (issue 29)
    assert changed.outputs.shape == (6,)


def test_jit_vs_no_jit_are_two_runs():
    prepared = load_program(source=SMALL, name="small.py").prepare()
    jit, eager = compare_jit(prepared, 3)
    assert [r.mode for r in jit.records] == [JIT] * 3 and [r.mode for r in eager.records] == [NO_JIT] * 3
    assert jit.n_compiles == 1 and eager.n_compiles == 0
    np.testing.assert_allclose(jit.output, eager.output, rtol=1e-6)
    assert jit.summary.n_calls == 3 and jit.summary.steady_decode_ms is not None


def test_jaxpr_source_lines_name_the_program_file_and_line(tmp_path):
    from app.core.inspect.source_map import build_source_map

    path = tmp_path / "mine.py"
    path.write_text(SMALL)
    edited = SMALL.replace("z = x * 2.0", "z = x * 3.0")  # unsaved editor text of that file
    program = load_program(path, source=edited)
    step_ir = entry_ir(program.prepare("f"))
    assert f"{path}:5" in step_ir.jaxpr_source and f"{path}:6" in step_ir.jaxpr_source
    assert "3.0" in step_ir.jaxpr
    groups = build_source_map(step_ir, "f").groups
    assert {(g.file, g.line) for g in groups} >= {(str(path), 5), (str(path), 6)}
    # editor text without a file: a real temporary file named after the editor's tab
    scratch = load_program(source=SMALL, name="scratch.py")
    assert f"{scratch.path}:6" in entry_ir(scratch.prepare()).jaxpr_source


def test_nn_module_through_torchax_matches_pytorch():
    import torch

    program = load_program(example("torch_module").path)
    prepared = program.prepare("model")
    assert prepared.backend == "torchax" and prepared.arg_names[0] == "weights"
    assert "fc1.weight" in prepared.args[0]  # weights are an argument, not closed over
    out = run_calls(prepared, 2).output
    x = torch.from_numpy(np.array(prepared.args[1]))
    with torch.no_grad():
        expected = program.module.model(x).numpy()
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-6)
    step_ir = entry_ir(prepared)
    assert f"{program.path}:18" in step_ir.jaxpr_source  # forward()'s gelu line, not torchax's


def test_torch_function_of_tensors_runs_through_torchax():
    source = "import torch\n\n\ndef g(a, b):\n    return torch.relu(a @ b)\n\n\ndef g_args():\n" \
             "    return (torch.ones(2, 3), -torch.ones(3, 4))\n"
    prepared = load_program(source=source, name="tf.py").prepare()
    assert prepared.backend == "torchax"
    np.testing.assert_array_equal(np.asarray(run_calls(prepared, 1).output), np.zeros((2, 4)))


ERRORS = {
    "syntax": ("import jax.numpy as jnp\n\ndef f(x)\n    return x\n", None, "SyntaxError", 3, "load"),
    "module level": ("import jax.numpy as jnp\n\nscale = 1 / 0\n", None, "ZeroDivisionError", 3, "load"),
    "python if on a traced value": (
        "import jax.numpy as jnp\n\ndef f(x):\n    y = x * 2\n    if y.sum() > 0:\n        return y\n"
        "    return -y\n\ndef f_args():\n    return (jnp.ones(3),)\n",
        "f", "TracerBoolConversionError", 5, "trace"),
    "concretization": (
        "import jax.numpy as jnp\n\ndef f(x):\n    n = int(x.sum())\n    return jnp.zeros(n)\n\n"
        "def f_args():\n    return (jnp.ones(3),)\n",
        "f", "ConcretizationTypeError", 4, "trace"),
    "shape": ("import jax.numpy as jnp\n\ndef f(a, b):\n    return a @ b\n\ndef f_args():\n"
              "    return (jnp.ones((2, 3)), jnp.ones((4, 5)))\n", "f", "TypeError", 4, "trace"),
    "args function": ("import jax.numpy as jnp\n\ndef f(x):\n    return x\n\ndef f_args():\n"
                      "    return (jnp.ones(3), undefined_name)\n", "f", "NameError", 7, "args"),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_in_user_code_name_the_users_line(case):
    source, entry, error_type, line, stage = ERRORS[case]
    with pytest.raises(ProgramError) as info:
        program = load_program(source=source, name=f"err_{case.replace(' ', '_')}.py")
        run_calls(program.prepare(entry), 2)
    err = info.value
    assert (err.error_type, err.line, err.stage) == (error_type, line, stage), str(err)
    assert err.file.endswith(".py") and err.message
    assert str(err).startswith(f"{err.file}:{line}: {error_type}")
    # the app stays usable: the next program loads and runs
    assert run_calls(load_program(source=SMALL, name="after.py").prepare(), 1).records


def test_runtime_error_in_no_jit_mode_names_the_line():
    source = ("import numpy as np\nimport jax.numpy as jnp\n\ndef f(x):\n    y = np.asarray(x)\n"
              "    return y[10]\n\ndef f_args():\n    return (jnp.ones(3),)\n")
    with pytest.raises(ProgramError) as info:
        run_calls(load_program(source=source, name="rt.py").prepare(), 1, NO_JIT)
    assert (info.value.error_type, info.value.line, info.value.stage) == ("IndexError", 6, "execute")


def _stop_after(seconds: float) -> tuple[threading.Event, threading.Timer]:
    stop = threading.Event()
    timer = threading.Timer(seconds, stop.set)
    timer.start()
    return stop, timer


def test_stop_ends_a_trace_stuck_in_a_python_loop_within_a_second():
    source = ("import jax.numpy as jnp\n\ndef f(x):\n    n = 0\n    while n >= 0:\n        n += 1\n"
              "    return x\n\ndef f_args():\n    return (jnp.ones(3),)\n")
    prepared = load_program(source=source, name="stuck.py").prepare()
    stop, timer = _stop_after(0.3)
    t0 = time.perf_counter()
    try:
        result = run_calls(prepared, 3, should_stop=stop.is_set)
    finally:
        timer.cancel()
    assert result.stopped and result.records == []
    assert time.perf_counter() - t0 - 0.3 < 1.0
    with pytest.raises(ProgramStopped):  # the IR capture is stoppable too
        entry_ir(prepared, should_stop=lambda: True)


def test_stop_ends_a_program_stuck_at_module_level():
    stop, timer = _stop_after(0.2)
    t0 = time.perf_counter()
    try:
        with pytest.raises(ProgramStopped):
            load_program(source="while True:\n    pass\n", name="stuck_load.py", should_stop=stop.is_set)
    finally:
        timer.cancel()
    assert time.perf_counter() - t0 < 1.2


def test_stop_between_calls_keeps_the_calls_made():
    prepared = load_program(source=SMALL, name="between.py").prepare()
    seen = []
    result = run_calls(prepared, 10, should_stop=lambda: len(seen) >= 3, on_record=seen.append)
    assert result.stopped and len(result.records) == 3 and result.summary.n_calls == 3


def test_entry_points_convention():
    source = ("import jax\nimport jax.numpy as jnp\n\ndef helper(x):\n    return x + 1\n\n"
              "@jax.jit\ndef a(x):\n    return helper(x)\n\ndef b(x):\n    return x * 2\n\n"
              "def example_args():\n    return (jnp.ones(2),)\n")
    program = load_program(source=source, name="conv.py")
    assert list(program.entries) == ["helper", "a", "b"]  # no X_args: every public function
    assert program.entries["a"].kind == "jit-function" and program.entries["a"].line == 8
    assert program.entries["b"].args_function == "example_args"
    listed = load_program(source=source + "\nENTRY_POINTS = ['b', 'a']\n", name="conv2.py")
    assert list(listed.entries) == ["b", "a"]
    spec = listed.prepare("b", spec="f32[5]")
    assert spec.args[0].shape == (5,) and run_calls(spec, 1).output.shape == (5,)
    with pytest.raises(ProgramError, match="No entry point 'c'"):
        listed.entry("c")


def test_donation_example_runs_repeatedly_and_aliases():
    prepared = load_program(example("donation").path).prepare()
    assert prepared.donate_argnums == (0,)
    result = run_calls(prepared, 3)
    assert len(result.records) == 3 and not prepared.args[0].is_deleted()
    assert entry_ir(prepared).memory["alias"] > 0


def test_program_calls_say_when_the_persistent_cache_served_the_compile(tmp_path):
    """A program's compiling call records whether JAX's persistent cache served it: a miss the first time,
    a hit for a fresh runner (cold in memory, warm on disk)."""
    import jax

    from app.core.compile_cache import xla as cc

    src = "import jax.numpy as jnp\n\ndef f(x):\n    return jnp.tanh(x) * 3.0 + x\n\ndef f_args():\n    return (jnp.ones((64, 64)),)\n"
    try:
        cc.set_persistent_cache(tmp_path / "jax-cache")
        cold = run_calls(load_program(source=src, name="cached.py").prepare("f"), n_calls=2)
        assert cold.records[0].compiled and cold.records[0].persistent_cache_hit is False
        jax.clear_caches()
        warm = run_calls(load_program(source=src, name="cached.py").prepare("f"), n_calls=2)
        assert warm.records[0].compiled and warm.records[0].persistent_cache_hit is True
    finally:
        cc.set_persistent_cache(None)
