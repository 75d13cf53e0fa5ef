"""Compiles per call site in the CLI (issue 41): ``program --json``'s summary carries them, ``program`` prints the
table, ``show-session`` prints it from a session file without importing JAX."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from app.cli import main

CHANGES = ["first call", "static argument n changed: 1 → 2", "static argument n changed: 2 → 3",
           "static argument n changed: 3 → 4"]


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_program_json_summary_has_a_per_site_table():
    code, out, err = run_cli("program", "--example", "compile_sites", "--no-jit", "--calls", "2", "--json")
    assert code == 0, err
    summary = [json.loads(line) for line in out.splitlines() if '"summary"' in line][-1]
    sites = {s["function"]: s for s in summary["compile_sites"]}
    assert sites["power"]["site"] == "10_compile_sites.py:27 (main)" and sites["power"]["n_compiles"] == 4
    assert sites["power"]["causes"] == CHANGES and sites["power"]["compile_ms"] > 0
    assert sites["normalize"]["n_compiles"] == 1 and sites["normalize"]["causes"] == ["first call"]
    costs = [s["compile_ms"] for s in summary["compile_sites"]]
    assert costs == sorted(costs, reverse=True)
    assert summary["n_compiles"] == sum(s["n_compiles"] for s in summary["compile_sites"])


def test_program_text_and_show_session_print_the_table(tmp_path):
    session = tmp_path / "sites.session"
    code, out, err = run_cli("program", "--example", "compile_sites", "--no-jit", "--calls", "2",
                             "--save-session", str(session))
    assert code == 0, err
    assert "compiles per call site" in out and "static argument n changed: 3 → 4" in out
    script = ("import sys, io\nfrom app.cli import main\nout = io.StringIO()\n"
              f"code = main(['show-session', {str(session)!r}], out=out, err=io.StringIO())\n"
              "print(out.getvalue())\nprint('JAX IMPORTED' if 'jax' in sys.modules else 'no jax')\n")
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert "no jax" in shown
    table = shown[shown.index("compiles per call site"):]
    power = next(line for line in table.splitlines() if "(main)  power" in line)
    assert "10_compile_sites.py:27 (main)" in power and " 4 " in power
    assert all(c in power for c in CHANGES)
