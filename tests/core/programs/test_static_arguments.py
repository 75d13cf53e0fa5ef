"""Static arguments (core side): a static argument's compile reason names it as the user wrote
it (23), calls that change a static value (24), and a program run's text speaks of calls, not tokens (25)."""

from __future__ import annotations

import pytest

from app.core.programs.compute.requests import ProgramRequest
from app.core.programs.lanes import run_arg_list
from app.core.programs.loader import load_program
from app.core.programs.runner import (
    ProgramRunner,
    parse_static_values,
    static_value_args,
)
from app.core.programs.specs import SpecError

STATIC_NAMES = '''from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("n",))
def f(x, n):
    for _ in range(n):
        x = jnp.sin(x)
    return x


def f_args():
    return (jnp.ones((8,)), 3)


def g(x, times, scale):
    return x * times * scale


def g_args():
    return {"args": (jnp.ones((4,)), 2, 1.5), "static_argnums": (1, 2)}
'''


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    path = tmp_path_factory.mktemp("issue29") / "static_names.py"
    path.write_text(STATIC_NAMES)
    return load_program(path)


def test_a_static_argnames_argument_is_named_as_written_in_the_compile_reason(program):
    prepared = program.prepare("f")
    assert prepared.static_argnums == (1,) and prepared.param_names == ("x", "n")
    runner = ProgramRunner(prepared)
    first = runner.call(prepared.args)
    second = runner.call((prepared.args[0], 4), index=1)
    assert first.record.compile_reason == "first call"
    assert second.record.compile_reason == "static argument n changed: 3 → 4"


def test_static_argnums_from_the_args_function_are_named_from_the_signature(program):
    prepared = program.prepare("g")
    runner = ProgramRunner(prepared)
    runner.call(prepared.args)
    again = runner.call((prepared.args[0], 5, 1.5), index=1)
    assert again.record.compile_reason == "static argument times changed: 2 → 5"
    assert prepared.user_index("scale") == 2 and prepared.user_index("1") == 1
    with pytest.raises(SpecError, match="no argument 'nope'.*0 \\(x\\), 1 \\(times\\), 2 \\(scale\\)"):
        prepared.user_index("nope")


def test_parse_static_values():
    assert parse_static_values("3,4,4") == (None, [3, 4, 4])
    assert parse_static_values("n=3, 4") == ("n", [3, 4])
    assert parse_static_values("1=True,False") == ("1", [True, False])
    assert parse_static_values("act=relu,gelu") == ("act", ["relu", "gelu"])
    assert parse_static_values("shape=(2,3),(4,6)") == ("shape", [(2, 3), (4, 6)])
    assert parse_static_values("'a=b','c'") == (None, ["a=b", "c"])
    for bad in ("", "n=", "[1],[2]", "3 +* 4"):
        with pytest.raises(SpecError):
            parse_static_values(bad)


def test_calls_that_change_a_static_value_compile_once_per_new_value_and_say_which(program):
    prepared = program.prepare("f")
    calls = static_value_args(prepared, [parse_static_values("3,4,4,3")])
    assert [c[1] for c in calls] == [3, 4, 4, 3] and all(c[0] is prepared.args[0] for c in calls)
    result = run_arg_list(prepared, calls)
    assert [r.compile_reason for r in result.records] == [
        "first call", "static argument n changed: 3 → 4", None, None]
    assert result.n_compiles == 2 and result.static_values == {1: [3, 4, 4, 3]}


def test_static_value_args_refuses_what_it_cannot_do(program):
    f, g = program.prepare("f"), program.prepare("g")
    with pytest.raises(SpecError, match="x \\(0\\) of f is not static.*n \\(1\\)"):
        static_value_args(f, [("x", [1, 2])])
    with pytest.raises(SpecError, match="g has 2 static arguments.*name the one"):
        static_value_args(g, [(None, [1, 2])])
    with pytest.raises(SpecError, match="differ in length"):
        static_value_args(g, [("times", [1, 2]), ("scale", [1.0])])
    two = static_value_args(g, [("times", [1, 2]), ("2", [1.0, 3.0])])
    assert [(c[1], c[2]) for c in two] == [(1, 1.0), (2, 3.0)]


def test_a_program_run_as_text_speaks_of_calls_not_tokens(program):
    from app.core.events import FinishedEvent
    from app.core.recording import RunRecorder
    from app.core.recording.compare import format_compare
    from app.core.recording.text import format_run, is_program_run

    prepared = program.prepare("f")
    result = run_arg_list(prepared, static_value_args(prepared, [(None, [3, 4, 4])]))
    recorder = RunRecorder("static_names.py:f", prepared.path, {"backend": "jax"},
                           {"calls": 3, "args": "f32[8], 3", "static_values": ["3,4,4"], "seed": 0})
    recorder.start("jit", label="static_names.py:f · jit")
    for record in result.records:
        recorder.feed(record)
    run = recorder.feed(FinishedEvent("calls", result.summary))
    assert is_program_run(run)
    text = format_run(run)
    assert "token" not in text and "input_ids" not in text and "prompt" not in text, text
    assert "program static_names.py:f" in text and "3 calls, all calls made" in text
    assert "first call " in text and "steady call " in text and "compiles 2" in text
    assert "arguments arg 0 [8]" in text and "static values 3,4,4" in text and "seed 0" in text
    assert "static argument n changed: 3 → 4" in text
    table = format_compare([run])
    assert "first call" in table and "steady call" in table and "calls" in table
    assert "TTFT" not in table and "token" not in table


def test_a_tracer_error_names_the_users_function_and_argument(tmp_path):
    """Issue 29, flaw 19: JAX's TracerBoolConversionError points at the user's function and its argument's
    name, not the app's wrapper in app/core/programs/runner.py and ``args[0]``."""
    import pytest

    from app.core.programs.errors import ProgramError
    from app.core.programs.loader import load_program
    from app.core.programs.runner import ProgramRunner

    path = tmp_path / "branchy.py"
    path.write_text("import jax.numpy as jnp\n\n\ndef relu_if(x):\n    if x.sum() > 0:\n        return x\n"
                    "    return -x\n\n\ndef relu_if_args():\n    return (jnp.ones(4),)\n")
    prepared = load_program(str(path)).prepare("relu_if")
    with pytest.raises(ProgramError) as info:
        ProgramRunner(prepared).call(prepared.args)
    message = str(info.value)
    assert info.value.line == 5 and "TracerBoolConversionError" in message
    assert f"relu_if at {path}:4" in message and "argument x" in message
    assert "runner.py" not in message and "args[0]" not in message


def test_an_out_of_memory_error_is_in_gb_and_marks_the_entry_points_line():
    """Issue 29, flaw 19: XLA's "Out of memory allocating N bytes" of the compiled program marks the entry
    point's line (no frame of the user's is in its traceback) and says the size in GB."""
    from app.core.programs.errors import program_error

    exc = RuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 160000000000 bytes.")
    error = program_error(exc, "/tmp/mine.py", "execute", "big", entry_line=7)
    assert error.file == "/tmp/mine.py" and error.line == 7
    assert "160000000000 bytes (149 GiB)" in error.message
    loading = program_error(exc, "/tmp/mine.py", "load", "", entry_line=7)  # not the compiled program's
    assert loading.line == 0


def test_a_syntax_error_in_an_edited_example_names_the_edited_copy():
    """Issue 29, flaw 19: an edited draft of a gallery example with a syntax error is reported as the edited copy,
    not at app/examples/05_loops.py:N (the installed example would look broken)."""
    from pathlib import Path

    import pytest

    from app.core.programs.errors import ProgramError
    from app.core.programs.loader import load_program

    example = next(Path(__file__).resolve().parents[3].glob("app/examples/05_*.py"))
    text = example.read_text(encoding="utf-8") + "\ndef broken(:\n"
    with pytest.raises(ProgramError) as info:
        load_program(str(example), source=text)
    assert str(info.value).startswith(f"{example.name} (edited, not saved):")
    assert info.value.file == str(example) and info.value.line > 0  # the editor still marks the line


def test_a_sweep_in_the_window_takes_the_first_array_argument_or_the_one_named(tmp_path):
    """Issue 29, flaw 11: the window's sweep varied argument 0 only, so mlp(params, x) failed ("argument 0 is not
    an array … (dict)"); now a plain sweep takes the first array argument, and x=… / 1=… name one."""
    import pytest

    from app.core.programs.loader import load_program
    from app.core.programs.runner import sweep_target
    from app.core.programs.specs import SpecError

    path = tmp_path / "mlp.py"
    path.write_text("import jax.numpy as jnp\n\n\ndef mlp(params, x, y):\n    return (x @ params['w']).sum() + y.sum()\n"
                    "\n\ndef mlp_args():\n    return ({'w': jnp.ones((4, 2))}, jnp.ones((3, 4)), jnp.ones(5))\n")
    prepared = load_program(str(path)).prepare("mlp")
    assert sweep_target(prepared, "1:4") == (1, "1:4")
    assert sweep_target(prepared, "y=2,3") == (2, "2,3") and sweep_target(prepared, "2=1:3") == (2, "1:3")
    with pytest.raises(SpecError, match="has no argument 'z'"):
        sweep_target(prepared, "z=1:4")


def test_the_window_keeps_its_runner_when_only_a_static_value_changes(tmp_path):
    """Issue 29, flaw 24: changing only the arguments (a static value 3 → 4) keeps the runner, so the window's
    next compile says which argument changed and how — not "first call"."""
    from app.core.events import CallRecord
    from app.core.programs.compute.service import ProgramService

    source = ("from functools import partial\n\nimport jax\nimport jax.numpy as jnp\n\n\n"
              "@partial(jax.jit, static_argnames=('n',))\ndef power(x, n):\n    return x ** n\n\n\n"
              "def power_args():\n    return (jnp.ones(4), 3)\n")
    path = tmp_path / "power.py"
    path.write_text(source)
    service = ProgramService()

    def records(spec: str) -> list[CallRecord]:
        request = ProgramRequest(source, path=str(path), entry="power", spec=spec, n_calls=2)
        return [e for e in service.handle(request, lambda: False) if isinstance(e, CallRecord)]

    first = records("f32[4], 3")
    assert first[0].compiled and first[0].compile_reason == "first call"
    second = records("f32[4], 4")
    assert second[0].compiled and second[0].compile_reason == "static argument n changed: 3 → 4", second[0]
    assert not second[1].compiled
