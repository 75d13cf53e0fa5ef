"""A newcomer's task, done as a check (issue 57, "Done when"): docs/architecture.md's "A newcomer's task" names, for
each of three small changes, the files to touch; each test makes its change in a copy of ``app/`` and ``widgets/``
(the tree itself is never edited), checks that it touched only the files the page names, and runs the consumers in
a child process on the copy to see that they follow: a mode's capability (the multi-process race's modes, the
settings race's XLA lane), an IR view (``inspect --what``, ``show-session --ir``, the session comparison, what
``inspect`` prints), a backend row's extra compile fact (the ``passes`` report's text and JSON lines, the Passes
tab's page text). A consumer that keeps its own list instead of reading the catalog fails here. Edits go through
the AST (a row's call rewritten, a row added to a catalog's tuple), so the catalogs' formatting and any field
added later do not break them. No Qt, no JAX compile."""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
#: a repository path as the page writes it (the pattern of tests/docs/test_architecture_doc.py)
PATH = re.compile(r"(?:(?<=\.\./)|(?<![\w/.-]))((?:app|widgets|tests|bench|tools|docs|assets)/[\w./*-]*[\w*/])")


def newcomer_tasks(text: str) -> dict[str, list[str]]:
    """``{task: paths}`` of the page's "### A newcomer's task" section: one bullet per task, ``- **Task**: …``."""
    section = re.search(r"^### A newcomer's task\n(.*?)(?=^### |^## |\Z)", text, flags=re.M | re.S)
    assert section is not None, "docs/architecture.md has no '### A newcomer's task' section"
    bullets = re.findall(r"^- \*\*([^*]+)\*\*(.*?)(?=^- \*\*|\Z)", section.group(1), flags=re.M | re.S)
    return {title.strip().rstrip(":"): sorted({m.group(1).rstrip("/.") for m in PATH.finditer(body)})
            for title, body in bullets}


def _task_paths(task: str) -> list[str]:
    tasks = newcomer_tasks(DOC.read_text(encoding="utf-8"))
    assert task in tasks, f"no '- **{task}**' bullet in the page's newcomer section: {sorted(tasks)}"
    return tasks[task]


class Tree:
    """A copy of the app (``app/``, ``widgets/``) that records which files an edit touched."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.touched: set[str] = set()
        for top in ("app", "widgets"):
            shutil.copytree(ROOT / top, root / top, ignore=shutil.ignore_patterns("__pycache__"))

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def write(self, rel: str, text: str) -> None:
        (self.root / rel).write_text(text, encoding="utf-8")
        self.touched.add(rel)

    def outside(self, named: list[str]) -> list[str]:
        """The touched files the page does not name: neither a named file nor a new file in a named folder."""
        folders = [p for p in named if (ROOT / p).is_dir()]
        return sorted(rel for rel in self.touched
                      if rel not in named and not any(Path(rel).parent.as_posix() == f for f in folders))

    def run(self, script: str) -> dict:
        """Run ``script`` (it prints one JSON object) in a child Python on the copy."""
        env = {**os.environ, "PYTHONPATH": str(self.root), "HF_HUB_OFFLINE": "1"}
        env.pop("QT_QPA_PLATFORM", None)
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=self.root, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])


def _offset(text: str, line: int, col: int) -> int:
    """The character offset of an AST position (``col`` counts UTF-8 bytes)."""
    lines = text.splitlines(keepends=True)
    return sum(len(s) for s in lines[:line - 1]) + len(lines[line - 1].encode("utf-8")[:col].decode("utf-8"))


def _span(text: str, node: ast.expr) -> tuple[int, int]:
    """``(start, end)`` character offsets of ``node`` in ``text``."""
    assert node.end_lineno is not None and node.end_col_offset is not None
    return _offset(text, node.lineno, node.col_offset), _offset(text, node.end_lineno, node.end_col_offset)


def _with_keywords(call: ast.Call, fields: list[str], values: dict[str, object]) -> str:
    """``call`` written again with its positional arguments as keywords (by ``fields``' order) and ``values`` set."""
    kwargs = {f: arg for f, arg in zip(fields, call.args, strict=False)}
    kwargs.update({k.arg: k.value for k in call.keywords if k.arg})
    kwargs.update({name: ast.Constant(value) for name, value in values.items()})
    new = ast.Call(func=call.func, args=[], keywords=[ast.keyword(arg=k, value=v) for k, v in kwargs.items()])
    return ast.unparse(new)


def edit_calls(text: str, func: str, first: object, fields: list[str], values: dict[str, object]) -> str:
    """``text`` with the call ``func(first, …)`` (or ``NAME = func(…)`` for ``first`` a name) given ``values``."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and any(
                isinstance(t, ast.Name) and t.id == first for t in node.targets):
            call = node.value
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and node.args[0].value == first:
            call = node
        else:
            continue
        if isinstance(call.func, ast.Name) and call.func.id == func:
            start, end = _span(text, call)
            return text[:start] + _with_keywords(call, fields, values) + text[end:]
    raise AssertionError(f"no {func}({first!r}, …) to edit")


def add_row(text: str, catalog: str, func: str, fields: list[str], values: dict[str, object]) -> str:
    """``text`` with one more row in the tuple ``catalog = (…)``: a copy of its first ``func(…)`` row, given
    ``values`` (so a field added to the row's class later keeps the copied row's value)."""
    tree = ast.parse(text)
    node = next(n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign))
                and any(isinstance(t, ast.Name) and t.id == catalog
                        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])))
    rows = node.value
    assert isinstance(rows, ast.Tuple), f"{catalog} is not a tuple of rows"
    model = next(r for r in rows.elts if isinstance(r, ast.Call) and isinstance(r.func, ast.Name)
                 and r.func.id == func)
    end = _span(text, rows.elts[-1])[1]
    return text[:end] + ", " + _with_keywords(model, fields, values) + text[end:]


def _fields(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


# -- give a mode a capability ------------------------------------------------------------------------------------

MODE_PROBE = """
    import json
    from app.cli.hosts import check_across_processes
    from app.cli.parser import build_parser
    from app.core.compile_settings import race as settings_race
    from app.core.mode_catalog import modes_on
    from app.core.parallel.hosts import check_modes_across_processes

    args = build_parser().parse_args(["race", "--coordinator", "h:1", "--num-processes", "2", "--process-id", "0",
                                      "--mesh", "tp=2"])
    check_across_processes(args)
    try:
        check_modes_across_processes(["torchax-eager"], 2)
        eager_across = True
    except Exception:
        eager_across = False
    print(json.dumps({"race_modes": args.modes, "eager_across": eager_across, "xla_lane": settings_race.RACE_MODE,
                      "xla_steps": sorted({m for m, _ in settings_race.STEPS.values()}),
                      "on_gpu": list(modes_on("gpu"))}))
"""


def test_give_a_mode_a_capability(tmp_path):
    from app.core.mode_catalog import ModeInfo

    named = _task_paths("Give a mode a capability")
    tree = Tree(tmp_path)
    before = tree.run(MODE_PROBE)
    assert "torchax-eager" not in before["race_modes"] and not before["eager_across"]
    assert before["xla_lane"] == "jit-static" and "jit-dynamic" in before["on_gpu"]

    rel, fields = "app/core/mode_catalog.py", _fields(ModeInfo)
    text = tree.read(rel)
    text = edit_calls(text, "ModeInfo", "torchax-eager", fields, {"across_processes": True})
    text = edit_calls(text, "ModeInfo", "jit-static", fields, {"race_lane": ""})
    text = edit_calls(text, "ModeInfo", "jit-dynamic", fields, {"race_lane": "xla", "devices": ("cpu",)})
    tree.write(rel, text)
    assert not tree.outside(named), f"the page does not name {tree.outside(named)}"

    after = tree.run(MODE_PROBE)
    # `race` across processes without --modes races every mode that runs across processes, and accepts them
    assert after["race_modes"] == ["torchax-eager", *before["race_modes"]] and after["eager_across"]
    # the settings race's model lane runs the mode whose race_lane is "xla"
    assert after["xla_lane"] == "jit-dynamic" and "jit-dynamic" in after["xla_steps"]
    # a mode's devices: the platforms a race without --modes runs it on
    assert "jit-dynamic" not in after["on_gpu"] and len(after["on_gpu"]) == len(before["on_gpu"]) - 1


# -- add an IR view ----------------------------------------------------------------------------------------------

VIEW_PROBE = """
    import json
    from app.cli.common import step_ir_text
    from app.cli.parser import build_parser
    from app.core.inspect.ir import StepIR
    from app.core.recording import compare, model

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    def choices(command, dest):
        return list(next(a for a in sub.choices[command]._actions if a.dest == dest).choices)
    ir = StepIR()
    for name in ("hlo_schedule",):
        if hasattr(ir, name):
            setattr(ir, name, "schedule of jit_step")
    print(json.dumps({"inspect_what": choices("inspect", "what"), "show_session_ir": choices("show-session", "ir"),
                      "ir_texts": list(compare.IR_TEXTS), "session_keeps": sorted(model._ir_to_dict(ir)),
                      "printed": step_ir_text(ir, "hlo-schedule") if hasattr(ir, "hlo_schedule") else None}))
"""


def test_add_an_ir_view(tmp_path):
    from app.core.inspect.views import IRView

    named = _task_paths("Add an IR view")
    tree = Tree(tmp_path)
    before = tree.run(VIEW_PROBE)
    assert "hlo-schedule" not in before["inspect_what"] and "hlo_schedule" not in before["ir_texts"]

    rel = "app/core/inspect/views.py"
    tree.write(rel, add_row(tree.read(rel), "IR_VIEWS", "IRView", _fields(IRView), {
        "key": "hlo_schedule", "title": "HLO schedule", "compiler": "xla", "cli": "hlo-schedule", "kind": "text",
        "lexer": "ir", "recorded": True, "source_lines": False, "mapped": False, "diffable": True, "ext": "txt",
        "widget": ""}))
    rel = "app/core/inspect/ir.py"  # its capture: a StepIR field
    text = tree.read(rel)
    first_field = re.search(r"^    jaxpr: str \| None = None\n", text, flags=re.M)
    assert first_field is not None
    tree.write(rel, text[:first_field.start()] + "    hlo_schedule: str | None = None\n" + text[first_field.start():])
    assert not tree.outside(named), f"the page does not name {tree.outside(named)}"

    after = tree.run(VIEW_PROBE)
    assert after["inspect_what"] == [*before["inspect_what"], "hlo-schedule"]
    assert after["show_session_ir"] == [*before["show_session_ir"], "hlo_schedule"]
    assert after["ir_texts"] == [*before["ir_texts"], "hlo_schedule"]
    assert sorted([*before["session_keeps"], "hlo_schedule"]) == after["session_keeps"]  # a session file keeps it
    assert after["printed"] == "schedule of jit_step"


# -- give a backend row an extra compile fact ---------------------------------------------------------------------

READER = '''
"""XLA:CPU's own dump files (a newcomer's reader module): how many files the compile dumped."""

from app.core.passes.extras import NamedFacts


def read_extras(directory, module, final, backend_facts, fusion_ir):
    from pathlib import Path
    files = [p for p in Path(directory).iterdir() if f".{module}." in p.name]
    return NamedFacts("XLA:CPU", {"dump files": len(files), "optimized module": final.file if final else ""})


def apply_capture(extras, capture):
    extras.figures = capture
    extras.facts["codegen threads"] = capture.threads
'''

BACKEND_PROBE = """
    import io, json, sys
    from app.cli import main
    from app.core.passes.dumps import open_dumps

    out = {}
    for flags in ([], ["--json"]):
        text, err = io.StringIO(), io.StringIO()
        assert main(["passes", "--dumps", sys.argv[1], *flags], out=text, err=err) == 0, err.getvalue()
        out["json" if flags else "text"] = text.getvalue()
    pipeline = open_dumps(sys.argv[1])
    out["page"] = [pipeline.extras.title, pipeline.extras.page_text(pipeline)] if pipeline.extras else None
    print(json.dumps(out))
"""

HLO = "HloModule jit_f\n\nENTRY %main (p: f32[4]) -> f32[4] {\n  %p = f32[4]{0} parameter(0)\n  ROOT %n = f32[4]{0} negate(%p)\n}\n"


def _cpu_dumps(folder: Path) -> Path:
    folder.mkdir()
    for name in ("before_optimizations", "0001.simplification.after_algsimp", "cpu_after_optimizations"):
        (folder / f"module_0001.jit_f.{name}.txt").write_text(HLO)
    return folder


def test_give_a_backend_row_an_extra_compile_fact(tmp_path):
    from app.core.backends import BackendFacts

    named = _task_paths("Give a backend row an extra compile fact")
    dumps = _cpu_dumps(tmp_path / "dumps")
    tree = Tree(tmp_path / "tree")
    probe = BACKEND_PROBE.replace("sys.argv[1]", repr(str(dumps)))
    before = tree.run(probe)
    assert before["page"] is None and "backend_facts" not in before["json"]

    rel = "app/core/backends.py"
    tree.write(rel, edit_calls(tree.read(rel), "BackendFacts", "CPU", _fields(BackendFacts),
                               {"dump_parser": "app.core.passes.cpu_dumps"}))
    tree.write("app/core/passes/cpu_dumps.py", READER.lstrip())
    assert not tree.outside(named), f"the page does not name {tree.outside(named)}"

    after = tree.run(probe)
    # the text report: the snapshots, then the facts, then what it said before (no capture: no compile split)
    assert "\nXLA:CPU (jit_f):\n  dump files        3\n  optimized module  module_0001.jit_f.cpu_after_optimizations.txt\n" \
        in after["text"]
    assert after["text"].replace(after["text"][after["text"].index("\nXLA:CPU"):after["text"].index("\nno profiler")],
                                 "") == before["text"]
    events = [json.loads(line) for line in after["json"].splitlines()]
    facts = [e for e in events if e["event"] == "backend_facts"]
    assert facts == [{"event": "backend_facts", "title": "XLA:CPU", "module": "jit_f",
                      "facts": {"dump files": 3, "optimized module": "module_0001.jit_f.cpu_after_optimizations.txt"}}]
    # the Passes tab's page: titled by the facts, their lines
    assert after["page"] == ["XLA:CPU", after["text"][after["text"].index("XLA:CPU"):after["text"].index("\nno profiler")]]


def test_the_section_parser_and_the_touch_check_can_fail(tmp_path):
    page = ("## Where\n\n### A newcomer's task\n\nIntro `app/x.py`.\n\n- **One**: `app/core/a.py` and `app/core/b/`.\n"
            "- **Two**: [`widgets/c.py`](../widgets/c.py).\n\n### Add a mode\n\n`app/core/z.py`\n")
    assert newcomer_tasks(page) == {"One": ["app/core/a.py", "app/core/b"], "Two": ["widgets/c.py"]}
    tree = Tree.__new__(Tree)
    tree.root, tree.touched = tmp_path, {"app/core/passes/new.py", "app/core/backends.py", "app/cli/passes.py"}
    assert tree.outside(["app/core/backends.py", "app/core/passes"]) == ["app/cli/passes.py"]


@pytest.mark.parametrize("src, expected", [
    ('ROWS = (\n    Row("a", 1),\n    Row("b", 2, flag=True),\n)\n', 'Row(name="a", n=1, flag=False)'),
])
def test_the_edits_keep_the_rest_of_the_text(src, expected):
    edited = edit_calls(src, "Row", "a", ["name", "n", "flag"], {"flag": False})
    assert edited == src.replace('Row("a", 1)', expected.replace('"', "'"))
    added = add_row(src, "ROWS", "Row", ["name", "n", "flag"], {"name": "c"})
    assert added == src.replace('flag=True)', "flag=True), Row(name='c', n=1)")
