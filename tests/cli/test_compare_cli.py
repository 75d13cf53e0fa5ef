"""``torchax-playground compare`` (issue 58) on small session files written here: no JAX, no model."""

from __future__ import annotations

import io
import json

from app.cli import main
from app.core.events import CallRecord, FinishedEvent, Summary
from app.core.inspect.ir import StepIR
from app.core.recording.model import RecordedRun
from app.core.recording.store import SessionFile
from tests.core.inspect.test_hlo_structural_diff import A, _renamed
from tests.session_helpers import BLOCK_HEAVY_IMPORTS


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _run(mode: str, steady_ms: float, hlo: str, tokens: list[int], jax: str = "0.7.0", race: int | None = 1,
         platform: str = "cpu") -> RecordedRun:
    records = [CallRecord(0, "decode", mode, {"input_ids": [1, 1]}, 900.0, 5.0, True, 100.0, 50.0, 700.0),
               CallRecord(1, "decode", mode, {"input_ids": [1, 1]}, steady_ms, steady_ms)]
    summary = Summary(mode, len(tokens), 900.0, steady_ms, 1000 / steady_ms, 2.0, 1000.0, 850.0, 1, 2)
    return RecordedRun(label=f"run · {mode}", mode=mode, model="tiny", race=race, records=records,
                       finished=FinishedEvent("max_new_tokens", summary, tokens, "x"),
                       ir={"decode": StepIR(hlo=hlo)}, settings={"max_new_tokens": len(tokens)},
                       environment={"packages": {"jax": jax}, "platform": platform, "device_kind": platform,
                                    "device_count": 1})


def _verdicts(ratio: float, lo: float, hi: float) -> list[dict]:
    return [{"race": 1, "baseline": "jit-static", "rounds": 12, "pairs": [
        {"mode": "jit-loop", "against": "jit-static", "ratio": ratio, "ci_low": lo, "ci_high": hi, "rounds": 12}]}]


def test_two_lanes_of_a_race_with_the_same_program_show_no_clear_difference(tmp_path):
    path = tmp_path / "race.session"
    SessionFile(runs=[_run("jit-static", 10.0, A, [1, 2, 3]), _run("jit-loop", 9.9, _renamed(A), [1, 2, 3])],
                verdicts=_verdicts(1.01, 0.97, 1.05)).save(path)
    code, out, _ = run_cli("compare", path)
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("no clear difference at steady decode (95 % CI 0.97–1.05); the same optimized HLO")
    assert "tokens: the same 3 tokens" in out and "mode: jit-static → jit-loop" in out
    code, out, _ = run_cli("compare", path, "--json")
    doc = json.loads(out)
    assert doc["steady"]["interval"] and doc["hlo"]["decode"]["same"] and doc["compile"]["compile"] == [700.0, 700.0]


def test_two_files_without_rounds_name_the_changed_fusion_versions_and_tokens(tmp_path):
    a, b = tmp_path / "a.session", tmp_path / "b.session"
    SessionFile(runs=[_run("jit-static", 10.0, A, [1, 2, 3], race=None)]).save(a)
    changed = A.replace("sine(%p0)", "cosine(%p0)")
    SessionFile(runs=[_run("jit-static", 8.0, changed, [1, 2, 4], jax="0.8.0", race=None, platform="gpu")]).save(b)
    code, out, _ = run_cli("compare", a, b)
    assert code == 0
    assert out.splitlines()[0] == ("B is 1.25× faster at steady decode (recorded without rounds: no interval); "
                                   "its optimized HLO differs: decode 1 change (0 added, 0 removed, 1 changed) "
                                   "in 1 fusion; compile +0 ms")
    assert "changed  %s (cosine, f32[4]{0}) in fusion %fusion.12 · model.py:3" in out
    assert "tokens: first differ at index 2 (A 3, B 4" in out
    assert "jax: 0.7.0 → 0.8.0" in out and "platform: cpu → gpu" in out
    doc = json.loads(run_cli("compare", a, b, "--json")[1])
    assert doc["steady"]["note"] == "recorded without rounds: no interval" and doc["tokens"]["first_difference"] == 2
    code, _, err = run_cli("compare", a, b, "--run", "1", "--run", "5")
    assert code == 2 and "positions 1–2" in err


def test_report_writes_one_html_page_with_the_same_verdict(tmp_path):
    from tests.core.compare.test_compare_programs import check_html

    a, b, html = tmp_path / "a.session", tmp_path / "b.session", tmp_path / "out.html"
    SessionFile(runs=[_run("jit-static", 10.0, A, [1, 2, 3], race=None)]).save(a)
    SessionFile(runs=[_run("jit-static", 8.0, _renamed(A), [1, 2, 3], race=None, platform="gpu")]).save(b)
    code, out, err = run_cli("compare", a, b, "--report", html)
    assert code == 0 and f"report: {html}" in err
    verdict = out.splitlines()[0]
    assert verdict.endswith("; the same optimized HLO; compile +0 ms")
    text = " ".join(check_html(html.read_text(encoding="utf-8")).text)
    assert verdict in text and "platform" in text and "a.session · b.session" in text
    code, _, err = run_cli("compare", a, b, "--report", tmp_path / "missing" / "out.html")
    assert code == 2 and "Cannot write the report" in err


def test_compare_and_its_report_need_no_jax_and_no_torch(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    path, html = tmp_path / "race.session", tmp_path / "r.html"
    stablehlo = "module @m {\n  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n" \
                "    %0 = stablehlo.sine %arg0 : tensor<4xf32>\n    return %0 : tensor<4xf32>\n  }\n}\n"
    runs = [_run("jit-static", 10.0, A, [1, 2, 3]), _run("jit-loop", 9.9, _renamed(A), [1, 2, 3])]
    for r in runs:
        r.ir["decode"].stablehlo = stablehlo
    SessionFile(runs=runs, verdicts=_verdicts(1.01, 0.97, 1.05)).save(path)
    script = BLOCK_HEAVY_IMPORTS + f"""
import io
from app.cli import main
out, err = io.StringIO(), io.StringIO()
assert main(["compare", {str(path)!r}, "--report", {str(html)!r}], out=out, err=err) == 0, err.getvalue()
sys.stdout.write(out.getvalue())
assert not any(m.split(".")[0] in ("jax", "torch", "transformers") for m in sys.modules)
"""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].endswith("; the same optimized HLO; compile +0 ms")
    assert "StableHLO of decode: the same StableHLO (3 ops matched, names aside)" in done.stdout
    assert html.read_text(encoding="utf-8").count("the same StableHLO") == 1


def test_runs_of_two_files_are_never_paired_by_one_files_race(tmp_path):
    """Both files hold a race 1 of jit-static and jit-loop: run 1 of the first against run 2 of the second were
    never raced together, so no interval (not the first file's 1.01 (0.97–1.05))."""
    a, b = tmp_path / "a.session", tmp_path / "b.session"
    for path in (a, b):
        SessionFile(runs=[_run("jit-static", 10.0, A, [1, 2, 3]), _run("jit-loop", 9.0, A, [1, 2, 3])],
                    verdicts=_verdicts(1.01, 0.97, 1.05)).save(path)
    doc = json.loads(run_cli("compare", a, b, "--run", "1", "--run", "4", "--json")[1])
    assert not doc["steady"]["interval"] and doc["steady"]["note"] == "recorded without rounds: no interval"
    same_file = json.loads(run_cli("compare", a, b, "--run", "1", "--run", "2", "--json")[1])
    assert same_file["steady"]["interval"] and same_file["steady"]["ci_low"] == 0.97
