"""Issue 35, "the backend row decides": what differs between XLA backends is a field of a row of
``app/core/backends.py`` (or a function it names). Counted on the code: no platform-name comparison outside the
row module and the device chooser, the platforms listed once (``BACKENDS``), one compile split that reads the
row's event names; and the rows' names, probes and parser modules are ones their readers know."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
from pathlib import Path

import pytest

from app.core.backends import BACKENDS, CPU, DEVICE_PROBES, GPU, roofline_probes
from app.core.passes import query
from app.core.passes.model import BackendPhase, PassPipeline, PipelineTime

ROOT = Path(__file__).resolve().parents[3]
#: The row module and the device chooser: the only modules that may compare platform names.
ALLOWED = {"app/core/backends.py", "app/core/engine/device.py"}
#: Listings of platform names outside the row module, by module, that may only fall (none: the modes' catalog
#: reads ``BACKENDS`` for ``PLATFORMS`` and the PyTorch modes' platforms).
LISTED_ELSEWHERE: dict[str, int] = {}
NAMES = frozenset(BACKENDS)


def _is_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in NAMES


def _holds_name(node: ast.AST) -> bool:
    return _is_name(node) or (isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(map(_is_name, node.elts)))


def _is_default_backend(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "default_backend"


def platform_comparisons(source: str) -> list[tuple[int, str]]:
    """``(line, code)`` of each comparison of ``source`` with a platform name (``== "gpu"``, ``!= "cpu"``,
    ``in ("cpu", …)``) or with ``jax.default_backend()``. A comparison of a torch device (an operand that names
    torch: ``torch_device in (None, "cpu")``) is not one of a platform."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if any(_holds_name(s) or _is_default_backend(s) for s in sides) and "torch" not in ast.unparse(node):
            found.append((node.lineno, ast.unparse(node)))
    return sorted(found)


def platform_listings(source: str) -> list[tuple[int, str]]:
    """``(line, code)`` of each tuple, list, set or dict of ``source`` that holds two or more platform names."""
    found = []
    for node in ast.walk(ast.parse(source)):
        items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else (
            [k for k in node.keys if k is not None] if isinstance(node, ast.Dict) else [])
        if sum(map(_is_name, items)) >= 2:
            found.append((node.lineno, ast.unparse(node)[:80]))
    return sorted(found)


def _app_modules() -> list[tuple[str, str]]:
    """``(path, text)`` of each module of ``app/`` and ``widgets/``."""
    paths = sorted([*(ROOT / "app").rglob("*.py"), *(ROOT / "widgets").rglob("*.py")])
    return [(p.relative_to(ROOT).as_posix(), p.read_text("utf-8")) for p in paths]


def test_no_platform_comparison_outside_the_row_module_and_the_device_chooser():
    found = [f"{path}:{line}: {code}" for path, text in _app_modules() if path not in ALLOWED
             for line, code in platform_comparisons(text)]
    assert not found, "compare a backend row's field instead (app/core/backends.py):\n" + "\n".join(found)


def test_the_scan_finds_platform_comparisons():
    """The check itself: each kind of comparison is found, a torch device's is not."""
    snippet = ('if device.platform != "cpu":\n    pass\n'
               'slow = jax.default_backend() == "gpu"\n'
               'host = p in ("cpu", "tpu")\n'
               'tpu = "tpu" == p\n'
               'cuda = torch_device not in (None, "cpu")\n')
    assert [line for line, _ in platform_comparisons(snippet)] == [1, 3, 4, 5]
    assert [line for line, _ in platform_listings(snippet + 'ALL = ("cpu", "gpu", "tpu")\n')] == [4, 7]


def test_platforms_are_listed_once():
    counts: dict[str, int] = {}
    for path, text in _app_modules():
        if path != "app/core/backends.py" and (n := len(platform_listings(text))):
            counts[path] = n
    grown = {path: n for path, n in counts.items() if n > LISTED_ELSEWHERE.get(path, 0)}
    assert not grown, f"platforms listed again (read BACKENDS instead): {grown}"


def test_the_cli_reads_the_platforms_from_the_rows():
    from app.cli import profile

    parser = profile.add_parser(argparse.ArgumentParser().add_subparsers())
    choices = next(a.choices for a in parser._actions if a.dest == "platform")
    assert tuple(choices) == tuple(BACKENDS) == ("cpu", "gpu", "tpu")


def test_the_compile_split_reads_the_rows_event_names(monkeypatch):
    """A made-up backend's row: the one split reads its events, none of the CPU's or the GPU's."""
    row = dataclasses.replace(
        CPU, platform="xpu", client_compile_events=("XpuClient::Compile",), run_backend_event="Xpu::RunBackend",
        breakdown_phases=(("lowering", ("Xpu::Lower",)), ("emit", ("Xpu::Emit", "Xpu::EmitOld"))),
        kernel_compile_event="Xpu::Kernel", assembler_event="Xpu::Assemble")
    monkeypatch.setitem(BACKENDS, "xpu", row)
    phases = [BackendPhase(name, ms, n, "t") for name, ms, n in (
        ("Xpu::RunBackend", 10.0, 1), ("Xpu::Lower", 3.0, 1), ("Xpu::EmitOld", 4.0, 1), ("Xpu::Kernel", 6.0, 3),
        ("Xpu::Assemble", 2.5, 2), ("JitCompiler::Compile", 99.0, 1), ("ThunkEmitter::EmitEntryComputation", 99.0, 1))]
    pipelines = [PipelineTime("simplification", 2.0, 0, 0.0), PipelineTime("after scheduling", 1.0, 0, 5.0, True)]
    pipeline = PassPipeline("jit_f", [], None, None, [], pipelines, phases, 20.0, 15.0, platform="xpu")
    b = query.compile_breakdown(pipeline)
    parts = {p.label: (p.ms, p.group, p.source) for p in b.parts}
    assert list(parts) == ["HLO passes: simplification", "HLO passes: after scheduling", "lowering", "emit",
                           "other backend", "other XLA", "outside XLA"]
    assert parts["lowering"] == (3.0, "backend", "Xpu::Lower") and parts["emit"] == (4.0, "backend", "Xpu::Emit")
    assert parts["other backend"] == (pytest.approx(2.0), "backend", "Xpu::RunBackend minus the above")
    assert parts["other XLA"][:2] == (pytest.approx(3.0), "other") and "XpuClient::Compile" in parts["other XLA"][2]
    assert parts["outside XLA"][0] == pytest.approx(5.0) and sum(p.ms for p in b.parts) == pytest.approx(20.0)
    assert (b.fusion_compile_ms, b.n_fusion_compiles, b.kernel_compile_event) == (6.0, 3, "Xpu::Kernel")
    assert (b.ptxas_ms, b.n_ptxas, b.assembler_event) == (2.5, 2, "Xpu::Assemble")


def test_one_breakdown_function_and_no_event_names_in_it():
    """``compile_breakdown`` is the one split (no per-backend twin), and query.py holds none of the rows' event
    names outside its docstrings: they come from the row."""
    tree = ast.parse(Path(query.__file__).read_text("utf-8"))
    functions = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and "breakdown" in n.name]
    assert functions == ["compile_breakdown"]
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    literals = {n.value for n in ast.walk(tree)
                if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings}
    events = set()
    for r in BACKENDS.values():
        events |= {*r.client_compile_events, r.run_backend_event, r.kernel_compile_event, r.assembler_event,
                   r.scheduling_event, r.codegen_window_event, r.autotune_pipeline, *r.autotune_events,
                   *(name for _, names in r.breakdown_phases for name in names)}
    assert not (literals & (events - {""}))


def test_the_gpu_split_names_the_gpu_rows_events():
    from app.core.passes.dumps import open_dumps

    pipeline = open_dumps(ROOT / "tests" / "fixtures" / "gpu" / "passes" / "llama-decode")
    sources = {p.label: p.source for p in query.compile_breakdown(pipeline).parts}
    assert sources["scheduling"].startswith(GPU.scheduling_event)
    assert sources["ptxas"] == f"{GPU.codegen_window_event} while a {GPU.assembler_event} runs"
    assert sources["other backend"].startswith(GPU.run_backend_event)
    assert GPU.autotune_pipeline in sources["autotune"]


def test_every_rows_probes_parser_and_names_are_known():
    from app.core.profile.probes import PROBES

    for row in BACKENDS.values():
        assert {row.bandwidth_probe, row.peak_flops_probe} - {""} <= set(PROBES), row.platform
        if row.dump_parser:
            parser = importlib.import_module(row.dump_parser)
            assert callable(parser.read_extras) and callable(parser.apply_capture)
        assert row.install_hint
    assert roofline_probes("cpu") == ("host read", "") and roofline_probes("gpu") == DEVICE_PROBES
    assert roofline_probes("metal") == DEVICE_PROBES  # a device plugin without a row is measured as a device


def test_the_rows_name_the_cpu_in_records_and_warnings():
    from app.core.recording.environment import machine_name

    assert machine_name({"platform": "cpu", "device_kind": "cpu", "device_count": 1}) == "CPU × 1"
    assert machine_name({"platform": None, "device_kind": "cpu", "device_count": 2}) == "CPU × 2"
    assert machine_name({"platform": "gpu", "device_kind": "NVIDIA H200", "device_count": 1}) == "NVIDIA H200 × 1"
    assert CPU.bfloat16_note and not GPU.bfloat16_note and CPU.torch_device == "cpu" and not BACKENDS["tpu"].torch_device
