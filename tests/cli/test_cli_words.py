"""The command line's words (issue 55): a count of 0 refused with exit 2, a count of one in the singular,
binary sizes named GiB/MiB, no empty ``# []`` scope lines in ``--what jaxpr-source``."""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest

from app.cli import main
from app.core.report.text import cap_note, format_summary, summary_line
from app.core.units import counted, nbytes

PROGRAM = '''import jax.numpy as jnp


def f(x):
    return jnp.sin(x) + 0.5  # not test_program_cli.py's f: a shared cache entry would make its first call a hit


def f_args():
    return (jnp.ones((3, 5)),)
'''


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    try:
        code = main(list(argv), out=out, err=err)
    except SystemExit as exit_:  # argparse refuses an argument with exit status 2
        code = exit_.code
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", [("program", "--example", "static_argnums", "--calls", "0"),
                                  ("race", "--calls", "0"), ("tradeoff", "--rounds", "-1")])
def test_a_count_below_one_is_refused_with_exit_2(argv, capsys):
    code, out, err = run_cli(*argv)
    said = err + capsys.readouterr().err
    assert code == 2
    assert f"argument {argv[-2]}: at least 1" in said and f"got {argv[-1]}" in said
    assert "mode jit" not in out  # nothing ran


def test_one_call_is_singular(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    code, out, err = run_cli("program", f"{path}:f", "--calls", "1")
    assert code == 0, err
    assert "mode jit | 1 call\n" in out and "1 calls" not in out


def test_jaxpr_source_has_no_empty_scope_lines(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    code, out, err = run_cli("program", f"{path}:f", "--what", "jaxpr-source")
    assert code == 0, err
    assert "prog.py:5" in out  # the source location is there
    assert "# []" not in out


def test_counts_and_sizes_read_as_words():
    assert counted(1, "call") == "1 call" and counted(2, "call") == "2 calls" and counted(0, "call") == "0 calls"
    assert counted(1200, "position") == "1,200 positions"
    assert nbytes(160_000_000_000) == "149 GiB" and nbytes(3 * 2**20) == "3.00 MiB" and nbytes(2048) == "2.00 KiB"
    assert nbytes(512) == "512 B" and nbytes(None) == "–"


def test_the_run_summaries_say_one_token_and_one_position():
    summary = SimpleNamespace(n_tokens=1, total_ms=5.0, ttft_ms=5.0, decode_tokens_per_s=None, n_compiles=1,
                              compile_ms=3.0, device="", mode="jit", steady_decode_ms=None,
                              overall_tokens_per_s=200.0, n_calls=1)
    finished = SimpleNamespace(summary=summary, reason="max_new_tokens")
    assert ": 1 token in" in summary_line(finished) and "1 compile (" in summary_line(finished)
    assert "| 1 token, stopped" in format_summary("m", finished)
    prompt = SimpleNamespace(new_tokens_cap=1, cache_len=1, n_tokens=1, max_new_tokens=4)
    assert "Capped at 1 new token: the KV cache holds 1 position " in cap_note(prompt)
