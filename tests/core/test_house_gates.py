"""The gates `make test` runs before pytest: tools/size_check.py (modules over 400 lines, functions over 60,
an allowlist that may only shrink) and the comparison of tools/type_check.py (pyright errors per package may
only fall). Each is run on small synthetic inputs that must fail, and the size check on the real tree."""

import subprocess
import sys
from pathlib import Path

from tools import size_check, type_check

ROOT = Path(__file__).resolve().parents[2]


def _module(root: Path, rel: str, lines: int, function_lines: int = 0) -> None:
    """A module of exactly `lines` lines; with function_lines, it starts with a decorated function that long."""
    body: list[str] = []
    if function_lines:
        body = ["@staticmethod", "def big():"] + ["    x = 1"] * (function_lines - 3) + ["    return x"]
    body += [f"y{i} = {i}" for i in range(lines - len(body))]
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(body) + "\n")


def _run(root: Path, allowlist: str | None, capsys) -> tuple[int, str]:
    path = root / "tools" / "size_allowlist.txt"
    if allowlist is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(allowlist)
    code = size_check.main(["--root", str(root)])
    return code, capsys.readouterr().out


def test_sizes_count_from_the_decorator_to_the_last_line(tmp_path):
    _module(tmp_path, "app/m.py", 401, function_lines=61)
    _module(tmp_path, "widgets/w.py", 400, function_lines=60)
    measured = size_check.measure(tmp_path)
    assert measured == {
        "app/m.py": size_check.Entry("module", "app/m.py", 401),
        "app/m.py:big": size_check.Entry("function", "app/m.py:big", 61),
    }


def test_methods_and_nested_functions_have_qualified_names(tmp_path):
    src = "class A:\n    def f(self):\n        def g():\n" + "            pass\n" * 70 + "        return g\n"
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "c.py").write_text(src)
    assert set(size_check.measure(tmp_path)) == {"app/c.py:A.f", "app/c.py:A.f.g"}


def test_an_unlisted_module_over_400_lines_fails(tmp_path, capsys):
    _module(tmp_path, "app/big.py", 401)
    code, out = _run(tmp_path, "", capsys)
    assert code == 1
    assert "FAIL: module app/big.py is 401 lines, over the 400-line limit, and not in tools/size_allowlist.txt" in out


def test_an_unlisted_function_over_60_lines_fails(tmp_path, capsys):
    _module(tmp_path, "widgets/w.py", 100, function_lines=61)
    code, out = _run(tmp_path, None, capsys)  # no allowlist at all: nothing is allowed
    assert code == 1
    assert "FAIL: function widgets/w.py:big is 61 lines" in out


def test_a_listed_offender_that_grew_fails(tmp_path, capsys):
    _module(tmp_path, "app/big.py", 450, function_lines=70)
    code, out = _run(tmp_path, "module app/big.py 440\nfunction app/big.py:big 70\n", capsys)
    assert code == 1
    assert "FAIL: module app/big.py grew from 440 to 450 lines" in out
    assert "app/big.py:big" not in out  # the function kept its size


def test_a_listed_offender_that_shrank_passes_with_a_note(tmp_path, capsys):
    _module(tmp_path, "app/big.py", 430)
    _module(tmp_path, "app/split.py", 390, function_lines=50)
    listed = "# comment\nmodule app/big.py 440\nmodule app/split.py 500\nfunction app/split.py:big 80\n"
    code, out = _run(tmp_path, listed, capsys)
    assert code == 0, out
    assert "FAIL" not in out
    assert "note: module app/big.py shrank from 440 to 430 lines" in out
    assert "note: module app/split.py is now within its 400-line limit (or gone): delete its line" in out
    assert "note: function app/split.py:big is now within its 60-line limit (or gone): delete its line" in out


def test_write_regenerates_the_list_and_then_it_passes(tmp_path, capsys):
    _module(tmp_path, "app/big.py", 430, function_lines=65)
    _run(tmp_path, "module app/gone.py 999\n", capsys)
    assert size_check.main(["--root", str(tmp_path), "--write"]) == 0
    listed = size_check.read_allowlist(tmp_path / "tools" / "size_allowlist.txt")
    assert [e.line() for e in listed.values()] == ["module app/big.py 430", "function app/big.py:big 65"]
    capsys.readouterr()
    assert _run(tmp_path, None, capsys)[0] == 0


def test_a_malformed_allowlist_line_fails(tmp_path, capsys):
    _module(tmp_path, "app/small.py", 10)
    code, out = _run(tmp_path, "module app/small.py many\n", capsys)
    assert code == 1 and "expected 'module PATH LINES'" in out


def test_the_real_tree_passes_the_size_check():
    proc = subprocess.run(
        [sys.executable, "tools/size_check.py"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_type_counts_may_only_fall():
    names = ["app.cli", "app.core.engine", "app.core.units"]
    table, problems = type_check.compare(
        {"app.cli": 2, "app.core.engine": 5, "app.core.new": 1}, {"app.cli": 3, "app.core.engine": 4}, names
    )
    assert [p.split(":")[0] for p in problems] == ["app.core.engine", "app.core.new"]  # a new package is held at 0
    assert any(line.startswith("app.cli") and line.endswith("fell: --write") for line in table)
    assert table[-1].split() == ["total", "7", "8"]
    assert type_check.compare({"app.cli": 1}, {"app.cli": 1}, names)[1] == []


def test_type_errors_are_counted_per_top_level_package():
    core = ROOT / "app" / "core"
    report = {"generalDiagnostics": [
        {"file": str(core / "engine" / "engine.py"), "severity": "error", "message": "a"},
        {"file": str(core / "engine" / "chat.py"), "severity": "error", "message": "b"},
        {"file": str(core / "units.py"), "severity": "error", "message": "c"},
        {"file": str(ROOT / "app" / "cli" / "parser.py"), "severity": "error", "message": "d"},
        {"file": str(ROOT / "app" / "cli" / "parser.py"), "severity": "warning", "message": "not counted"},
        {"file": str(ROOT / "bench" / "x.py"), "severity": "error", "message": "stray"},
    ]}
    counts, stray = type_check.count_errors(report, ROOT)
    assert counts == {"app.core.engine": 2, "app.core.units": 1, "app.cli": 1}
    assert len(stray) == 1 and "stray" in stray[0]
    assert {"app.cli", "app.core.engine", "app.core.units", "app.core.session"} <= set(type_check.packages(ROOT))


def test_a_widgets_folder_over_12_modules_fails(tmp_path, capsys):
    for i in range(13):
        _module(tmp_path, f"widgets/plot/m{i}.py", 5)
    _module(tmp_path, "widgets/plot/__init__.py", 1)  # not a module of the count
    _module(tmp_path, "app/core/big/__init__.py", 1)
    for i in range(14):
        _module(tmp_path, f"app/core/big/m{i}.py", 5)  # app/core is not gated by folder
    code, out = _run(tmp_path, "", capsys)
    assert code == 1 and "FAIL: widgets/plot has 13 modules (limit 12)" in out and "app/core" not in out
    (tmp_path / "widgets/plot/m12.py").unlink()
    assert _run(tmp_path, "", capsys)[0] == 0
