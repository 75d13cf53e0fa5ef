"""Two runs' compiled programs compared (issue 58): the first XLA pass whose output differs where both recorded
their pass pipelines (a flag that turns fusion off, recorded on the CPU), the StableHLO diff beside the HLO diff
in the comparison's dict and verdict, and the one-page HTML report (valid, escaped, self-contained)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from app.core.compare.programs import first_pass
from app.core.compare.report import report_html
from app.core.compare.runs import compare_runs
from app.core.inspect.ir import StepIR
from app.core.recording.model import RecordedPasses, RecordedRun
from tests.cli.test_compare_cli import _run
from tests.core.inspect.test_hlo_structural_diff import A, _renamed

#: Void elements of HTML (no end tag).
VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source", "rect", "line",
        "circle", "path"}


class _Checker(HTMLParser):
    """Tags balanced (HTML and inline SVG), the text collected, external references and scripts counted."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.text: list[str] = []
        self.tags: list[str] = []
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.external += [v for k, v in attrs if k in ("src", "href") and v and "://" in v]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def check_html(text: str) -> _Checker:
    """Parse ``text``; assert it is a whole, balanced, self-contained page."""
    assert text.startswith("<!DOCTYPE html>")
    c = _Checker()
    c.feed(text)
    c.close()
    assert not c.errors and not c.stack, (c.errors, c.stack)
    assert "script" not in c.tags and not c.external
    return c


def _passes(step: str, snapshots: list[dict], initial: str | None = None) -> RecordedPasses:
    return RecordedPasses(step=step, mode="jit-static", snapshots=snapshots, initial_hlo=initial, final_hlo=None)


def _snap(pipeline: str, name: str, n: int, fusions: dict | None = None) -> dict:
    return {"pipeline": pipeline, "pass": name, "n_instructions": n, "fusion_kinds": fusions or {}, "custom_calls": 0}


def test_first_pass_names_what_was_not_recorded_and_where_pipelines_part():
    a, b = _run("jit-static", 10.0, A, [1]), _run("jit-loop", 10.0, A, [1])
    assert first_pass(a, b) == {"recorded": False, "line": "XLA's pass pipeline: not recorded by either run (the "
                                                          "Passes tab records it; a saved session keeps it)"}
    common = [_snap("", "before-optimizations", 14), _snap("simplification", "algsimp", 12)]
    a.passes = _passes("decode", [*common, _snap("fusion", "fusion", 3, {"kLoop": 1})], A)
    b.passes = _passes("prefill", common, A)
    assert "not comparable" in first_pass(a, b)["line"]
    b.passes = _passes("decode", [*common, _snap("fusion", "fusion", 9, {"kLoop": 4})], _renamed(A))
    doc = first_pass(a, b)
    assert doc["input_same"] is True and doc["first"]["pass"] == "fusion" and doc["first"]["position"] == 2
    assert doc["line"] == ("XLA's pass pipeline of decode: the first pass whose output differs is fusion / fusion "
                           "(snapshot 3 of 3 vs 3: instructions 3 → 9, fusions kLoop 1 → 4)")
    b.passes = _passes("decode", common, A)
    assert first_pass(a, b)["first"]["why"] == "only A changed the module 1 more time(s)"


def _recorded(lowered, options: dict, label: str) -> RecordedRun:
    from app.core.passes.record import record_pipeline

    p = record_pipeline(lowered, compiler_options=options)
    passes = RecordedPasses(step="decode", mode="jit-static", snapshots=[s.summary() for s in p.all_snapshots()],
                            initial_hlo=p.before.text if p.before else None, final_hlo=p.final.text if p.final else None)
    ir = StepIR(stablehlo=lowered.as_text(), stablehlo_debug=lowered.as_text(debug_info=True))
    return RecordedRun(label=label, mode="jit-static", model="f", ir={"decode": ir}, passes=passes,
                       environment={"xla_flags": " ".join(f"--{k}={v}" for k, v in options.items())})


def test_a_flag_that_turns_fusion_off_names_the_fusions_and_the_first_differing_pass():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def f(x):
        return jnp.tanh(jnp.sin(x) * 2.0 + 1.0).sum(axis=1)

    lowered = jax.jit(f).lower(jnp.ones((16, 8), jnp.float32))
    a = _recorded(lowered, {}, "default")
    b = _recorded(lowered, {"xla_disable_hlo_passes": "fusion"}, "no fusion")
    doc = compare_runs(a, b)
    hlo = doc["hlo"]["decode"]
    assert not hlo["same"] and len(hlo["fusions"]) >= 2 and hlo["removed"] + hlo["added"] > 0
    assert doc["stablehlo"]["decode"]["same"] and doc["passes"]["input_same"] is True
    first = doc["passes"]["first"]
    assert first is not None and "fusion" in first["pass"], first
    assert doc["verdict"].startswith("no steady speed to compare; its optimized HLO differs: decode ")
    assert "(from the same StableHLO)" in doc["verdict"] and "xla_flags" in doc["differ"]
    same = compare_runs(a, _recorded(lowered, {}, "default again"))
    assert same["hlo"]["decode"]["same"] and same["passes"]["first"] is None
    assert same["verdict"] == "no steady speed to compare; the same optimized HLO"


def test_the_report_is_one_valid_self_contained_page_with_the_verdict_and_the_diff(tmp_path):
    a = _run("jit-static", 10.0, A, [1, 2, 3])
    b = _run("jit-loop", 8.0, A.replace("sine(%p0)", "cosine(%p0)"), [1, 2, 4], jax="0.8.0")
    b.label = "run <2> & \"B\""
    verdicts = [{"race": 1, "pairs": [{"mode": "jit-loop", "against": "jit-static", "ratio": 1.25, "ci_low": 1.2,
                                       "ci_high": 1.3, "rounds": 12}]}]
    doc = compare_runs(a, b, verdicts)
    page = report_html(doc, "6 Dec <today>")
    c = check_html(page)
    text = " ".join(c.text)
    assert doc["verdict"].startswith("B is 1.25× faster at steady decode (95 % CI 1.20–1.30)")
    assert doc["verdict"] in text and page.index(doc["verdict"]) < page.index("<h2>")  # the verdict first
    assert "run <2> & \"B\"" in text and "run &lt;2&gt; &amp;" in page and "6 Dec <today>" in text
    assert "cosine" in text and "%fusion.12" in text and "model.py:3" in text and "changed" in text
    assert "the first differ" not in text and "first differ at index 2" in text
    assert "0.7.0" in text and "0.8.0" in text and "over 12 paired rounds, B's speed-up 1.250× (95 % CI 1.200–1.300)" in text
    assert c.tags.count("svg") == 2  # the speed-up with its interval, the compile stages
    none = report_html(compare_runs(a, _run("jit-loop", 8.0, A, [1, 2, 3], race=None)))
    assert "recorded without rounds: no interval" in " ".join(check_html(none).text)


def test_a_gpu_capture_against_a_cpu_run_compares_and_names_backend_and_versions():
    import gzip

    from tests.core.inspect.test_hlo_structural_diff import GPU_HLO

    cpu = _run("jit-static", 10.0, A, [1, 2, 3], race=None)
    gpu = _run("jit-static", 2.0, gzip.open(GPU_HLO, "rt").read(), [1, 2, 3], jax="0.11.2", race=None,
               platform="gpu")
    gpu.environment.update(device_kind="NVIDIA H200", machine="x86_64")
    doc = compare_runs(cpu, gpu)
    assert doc["verdict"].startswith("B is 5.00× faster at steady decode (recorded without rounds: no interval); "
                                     "its optimized HLO differs: decode ")
    d = doc["hlo"]["decode"]
    assert d["n_b"] > 1000 and d["added"] > 100 and len(d["fusions"]) > 10
    assert doc["differ"]["jax"] == ["0.7.0", "0.11.2"] and doc["differ"]["platform"] == ["cpu", "gpu"]
    assert doc["differ"]["device_kind"] == ["cpu", "NVIDIA H200"]
    page = report_html(doc)
    assert "NVIDIA H200" in " ".join(check_html(page).text) and "more (compare --json lists all)" not in page
