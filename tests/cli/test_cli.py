"""The command line: streamed text, --json lines, inspect, and one-line errors with exit status 2."""

from __future__ import annotations

import io
import json

import pytest

from app.cli import main


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.cold_compile  # the table's note says "compiled: first call" (a compile served from a cache says so)
def test_generate_streams_text_then_a_timing_table(model_dirs):
    code, out, err = run_cli("generate", "--model", model_dirs("llama"), "--prompt", "The jit",
                             "--max-new-tokens", "5")
    assert code == 0, err
    assert out.startswith("The jit")
    assert "compiled: first call" in out and "time to first token" in out and "compiles 2" in out
    assert "[compiling] decode step" in err


def test_generate_json_lines(model_dirs):
    code, out, _ = run_cli("generate", "--model", model_dirs("llama"), "--prompt", "The jit",
                           "--max-new-tokens", "5", "--json", "--mode", "jit-static")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    tokens = [x for x in lines if x["event"] == "token"]
    calls = [x for x in lines if x["event"] == "call"]
    summary = lines[-1]
    assert summary["event"] == "summary" and summary["n_tokens"] == 5
    assert [t["token_id"] for t in tokens] == summary["token_ids"]
    assert len(calls) == 5 and calls[0]["step"] == "prefill"
    assert summary["text"].startswith("".join(t["text"] for t in tokens))


def test_inspect_prints_jaxpr_and_writes_hlo(model_dirs, tmp_path):
    code, out, _ = run_cli("inspect", "--model", model_dirs("llama"), "--step", "decode", "--what", "jaxpr")
    assert code == 0 and "dot_general" in out
    target = tmp_path / "decode.hlo"
    code, _, err = run_cli("inspect", "--model", model_dirs("llama"), "--step", "prefill", "--what", "hlo",
                           "-o", str(target))
    assert code == 0 and target.read_text().startswith("HloModule") and "wrote" in err
    code, out, _ = run_cli("inspect", "--model", model_dirs("llama"), "--what", "cost")
    assert code == 0 and json.loads(out)["flops"] > 0


def test_errors_are_one_line_with_status_2(model_dirs):
    code, out, err = run_cli("generate", "--model", "no-such-org/no-such-model-xyz")
    error_lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert code == 2 and len(error_lines) == 1 and "no-such-org/no-such-model-xyz" in error_lines[0]
    assert "Traceback" not in err
    code, _, err = run_cli("generate", "--model", model_dirs("llama"), "--top-p", "1.5")
    assert code == 2 and "Top-p must be in (0, 1]" in err and "got 1.5" in err  # the window's words (issue 55)
    code, _, err = run_cli("inspect", "--model", model_dirs("llama"), "--mode", "torch")
    assert code == 2 and "compiles nothing" in err


def test_inspect_agrees_with_the_catalog_on_what_each_mode_can_show(model_dirs):
    """The CLI and the window derive what a mode can show from the catalog: torch-compile's IR (the FX graph
    Dynamo captured) is inspectable from the command line too, and a jit view asked of it is refused by name."""
    from app.core.mode_catalog import CATALOG

    assert [i.name for i in CATALOG if i.inspectable] == ["jit-dynamic", "jit-static", "jit-loop", "torch-compile"]
    code, _, err = run_cli("inspect", "--model", model_dirs("llama"), "--mode", "torch-compile", "--what", "hlo")
    assert code == 2 and "fx-graph" in err
    code, out, _ = run_cli("inspect", "--model", model_dirs("llama"), "--mode", "torch-compile", "--step", "prefill")
    assert code == 0 and "def forward" in out


def test_the_window_takes_its_model_with_or_without_the_gui_subcommand(monkeypatch):
    """``torchax-playground --model X`` and ``torchax-playground gui --model X`` open the window on X."""
    import app.cli.parser as parser
    from app.cli.parser import main

    seen = []
    monkeypatch.setattr(parser, "gui_main", lambda argv: seen.append(argv) or 0)
    assert main(["--model", "pydoc-llama"]) == 0 and main(["gui", "--model", "pydoc-llama"]) == 0
    assert seen == [["--model", "pydoc-llama"], ["--model", "pydoc-llama"]]
