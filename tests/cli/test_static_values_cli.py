"""From the command line: a static argument named as written (23), ``--static-values`` reaching
"static argument changed" (24), ``show-session`` of a program run in calls (25), ``--debug`` after the
subcommand (26), and a capped ``--max-new-tokens`` said on stderr (20)."""

from __future__ import annotations

import io
import re

import pytest

from app.cli import main
from app.cli.parser import COMMANDS, build_parser

PROGRAM = '''from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("n",))
def f(x, n):
    for _ in range(n):
        x = jnp.sin(x)
    return x


def f_args():
    return (jnp.ones((8,)), 3)
'''


#: The table's note of the call that compiled for a new static value. The suite's compile cache is shared by
#: every test (tests/compile_sharing.py): where another test compiled the same program first, the note says
#: "compiled (persistent cache)"; the reason is what these tests are about.
CHANGED = r"compiled( \(persistent cache\))?: static argument n changed: {}"


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def prog(tmp_path):
    path = tmp_path / "static_names.py"
    path.write_text(PROGRAM)
    return path


def test_static_values_change_a_static_argument_per_call_and_the_reason_names_it(prog):
    code, out, err = run_cli("program", prog, "--static-values", "3,4,4,3")
    assert code == 0, err
    assert "| 4 calls" in out and "compiles 2" in out
    assert re.search(CHANGED.format("3 → 4"), out), out
    assert "static argument 1" not in out
    assert "static n per call: 3, 4, 4, 3" in out


def test_static_values_by_name_in_no_jit_and_compare_jit(prog):
    code, out, err = run_cli("program", prog, "--static-values", "n=2,5", "--compare-jit")
    assert code == 0, err
    assert "mode jit | 2 calls" in out and "mode no-jit | 2 calls" in out
    assert out.count("static n per call: 2, 5") == 2
    assert re.search(CHANGED.format("2 → 5"), out), out


@pytest.mark.parametrize("extra, message", [
    (("--static-values", "x=1,2"), "x (0) of f is not static"),
    (("--static-values", "3,4", "--calls", "3"), "leave out --calls"),
    (("--static-values", "3,4", "--sweep", "1:3"), "--static-values and --sweep"),
    (("--static-values", "[1],[2]"), "not hashable"),
    (("--static-values", "m=3,4"), "no argument 'm'"),
])
def test_static_values_errors_are_one_line(prog, extra, message):
    code, _, err = run_cli("program", prog, *extra)
    assert code == 2 and message in err and "Traceback" not in err, err


def test_program_help_documents_static_values():
    help_text = build_parser()._subparsers._group_actions[0].choices["program"].format_help()
    flat = " ".join(help_text.split())
    assert "--static-values [ARG=]V1,V2,…" in flat
    assert "static argument n changed: 3 → 4" in flat and "Replaces --calls" in flat


def test_show_session_of_a_program_run_speaks_of_calls(prog, tmp_path):
    session = tmp_path / "prog.session"
    code, _, err = run_cli("program", prog, "--calls", 3, "--save-session", session)
    assert code == 0, err
    code, out, err = run_cli("show-session", session)
    assert code == 0, err
    assert "token" not in out and "input_ids" not in out and "prompt" not in out, out
    assert "program static_names.py:f" in out and "3 calls, all calls made" in out
    assert "first call " in out and "steady call " in out and "compiles 1" in out
    assert "arguments arg 0 [8]" in out and "settings calls 3 · args f32[8], 3 · seed 0" in out
    code, out, err = run_cli("show-session", session, "--compare")
    assert code == 0, err
    assert "first call" in out and "steady call" in out and "TTFT" not in out and "tokens" not in out


def test_show_session_of_a_static_values_run_keeps_its_values_and_reasons(prog, tmp_path):
    session = tmp_path / "static.session"
    code, _, err = run_cli("program", prog, "--static-values", "3,4,4", "--save-session", session)
    assert code == 0, err
    code, out, err = run_cli("show-session", session)
    assert code == 0, err
    assert "settings calls 3 · args f32[8], 3 · static values 3,4,4" in out and "compiles 2" in out
    assert "static argument n changed: 3 → 4" in out


def test_debug_is_accepted_after_any_subcommand(prog):
    parser = build_parser()
    for command in [*COMMANDS, "gui"]:
        rest = {"program": [str(prog)], "show-session": ["x.session"], "compare": ["a.session", "b.session"]}.get(command, [])
        assert parser.parse_args([command, *rest, "--debug"]).debug is True
        assert parser.parse_args(["--debug", command, *rest]).debug is True
        assert parser.parse_args([command, *rest]).debug is False
    # with --debug after the subcommand an error shows its traceback (raises) instead of one line
    code, _, err = run_cli("program", prog, "--static-values", "x=1,2")
    assert code == 2
    from app.core.programs.specs import SpecError

    with pytest.raises(SpecError):
        run_cli("program", prog, "--static-values", "x=1,2", "--debug")


def test_a_capped_max_new_tokens_is_said_on_stderr(model_dirs):
    code, _, err = run_cli("generate", "--model", model_dirs("llama"), "--prompt", "The jit", "--max-new-tokens",
                           "100000", "--ignore-eos", "--mode", "jit-static", "--no-ir")
    assert code == 0, err
    note = next(line for line in err.splitlines() if line.startswith("note: Capped at"))
    assert "the KV cache holds 256 positions" in note and "asked for 100,000" in note
