"""A type checker ratchet: pyright's error count per package of app/core, app/cli, app/gui and widgets may only fall.

    python tools/type_check.py            # runs pyright, prints a table, fails (exit 1) when a count rose
    python tools/type_check.py --write    # records the counts that fell in tools/type_errors.json

pyright runs as configured in pyproject.toml (``[tool.pyright]``: ``include = ["app/core", "app/cli",
"app/gui", "widgets"]``, ``typeCheckingMode = "standard"``) against the interpreter that runs this script. Its
errors are counted per top-level package: ``app.cli``, ``app.gui`` and ``widgets`` (each folder whole, one
package), and each package or module directly under app/core (``app.core.engine``, ``app.core.backends``, …).
``tools/type_errors.json`` holds the recorded counts: a count above its record fails the check, and a package
that is not recorded (a new one) is held at 0. ``--write`` lowers the records to the counts that fell and never
raises one: a rise is fixed in the code (or, for a deliberate change such as a new pyright pin, edited by hand
in the JSON with the reason in the commit).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "tools" / "type_errors.json"
NOTE = (
    "pyright errors per package (tools/type_check.py): counts may only fall; a package at 0 (or not listed) "
    "stays at 0. Lower them with `python tools/type_check.py --write`."
)


def package_of(path: str, root: Path = ROOT) -> str | None:
    """'app.cli', 'app.gui', 'widgets' or 'app.core.<name>' for a file of app/cli, app/gui, widgets or app/core;
    None for any other file."""
    try:
        parts = Path(path).resolve().relative_to(root).parts
    except ValueError:
        return None
    if parts[:2] == ("app", "cli"):
        return "app.cli"
    if parts[:2] == ("app", "gui"):
        return "app.gui"
    if parts[:1] == ("widgets",):
        return "widgets"
    if parts[:2] == ("app", "core") and len(parts) >= 3:
        name = parts[2].removesuffix(".py")
        return "app.core" if name == "__init__" else f"app.core.{name}"
    return None


def _path_of(package: str, root: Path = ROOT) -> str:
    """The folder or file of a counted package, relative to the root: app/core/engine, app/core/units.py,
    app/gui, widgets."""
    folder = package.replace(".", "/")
    if package == "app.core":
        return "app/core/__init__.py"
    return folder if (root / folder).is_dir() else folder + ".py"


def _python() -> str:
    """This interpreter, relative to the root where it lies inside it (.venv/bin/python)."""
    exe = Path(sys.executable)
    return exe.relative_to(ROOT).as_posix() if exe.is_relative_to(ROOT) else str(exe)


def packages(root: Path = ROOT) -> list[str]:
    """Every package counted, so that those at 0 show in the table and are recorded at 0."""
    core = root / "app" / "core"
    names = {"app.cli", "app.gui", "widgets"}
    for child in core.iterdir():
        if child.is_dir() and any(child.rglob("*.py")):
            names.add(f"app.core.{child.name}")
        elif child.suffix == ".py":
            names.add(package_of(str(child), root) or "")
    return sorted(n for n in names if n)


def run_pyright(root: Path = ROOT) -> tuple[dict, float]:
    """pyright's JSON report and the seconds it took; RuntimeError when pyright could not check."""
    cmd = [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable]
    env = dict(os.environ, PYRIGHT_PYTHON_IGNORE_WARNINGS="1")  # no "new version available" look-up
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
    except OSError as e:
        raise RuntimeError(f"cannot run pyright: {e}") from e
    seconds = time.monotonic() - started
    # 0: no errors, 1: errors found; 2 and above: pyright failed (fatal error, bad config, bad arguments)
    if proc.returncode not in (0, 1):
        detail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        hint = " (install it: pip install -e '.[test]')" if "No module named pyright" in proc.stderr else ""
        raise RuntimeError(f"pyright exited with {proc.returncode}{hint}: " + " | ".join(detail))
    try:
        return json.loads(proc.stdout), seconds
    except json.JSONDecodeError as e:
        raise RuntimeError(f"pyright printed no JSON report: {proc.stdout[:300]!r} {proc.stderr[:300]!r}") from e


def count_errors(report: dict, root: Path = ROOT) -> tuple[dict[str, int], list[str]]:
    """(errors per package, errors in files outside app/core, app/cli, app/gui and widgets, as lines)."""
    counts: dict[str, int] = {}
    stray: list[str] = []
    for diag in report.get("generalDiagnostics", []):
        if diag.get("severity") != "error":
            continue
        package = package_of(diag.get("file", ""), root)
        if package is None:
            stray.append(f"{diag.get('file')}: {diag.get('message', '').splitlines()[0]}")
        else:
            counts[package] = counts.get(package, 0) + 1
    return counts, stray


def read_record(path: Path = RECORD) -> dict[str, int] | None:
    if not path.exists():
        return None
    return {k: int(v) for k, v in json.loads(path.read_text(encoding="utf-8"))["errors"].items()}


def write_record(path: Path, counts: dict[str, int], version: str) -> None:
    data = {"note": NOTE, "pyright": version, "errors": dict(sorted(counts.items()))}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def compare(counts: dict[str, int], recorded: dict[str, int], names: list[str]) -> tuple[list[str], list[str]]:
    """(table lines, problems): a problem for each package whose count rose above its record (0 if none)."""
    rows = sorted(set(names) | set(counts) | set(recorded))
    width = max(len(n) for n in [*rows, "package"])
    table = [f"{'package':<{width}}  recorded   now"]
    problems = []
    for name in rows:
        now, was = counts.get(name, 0), recorded.get(name, 0)
        mark = "  ROSE" if now > was else ("  fell: --write" if now < was else "")
        table.append(f"{name:<{width}}  {was:>8}  {now:>4}{mark}")
        if now > was:
            problems.append(
                f"{name}: {now} pyright errors, {was} recorded; the count may only fall: fix the new ones "
                f"(see them: {_python()} -m pyright --pythonpath {_python()} {_path_of(name)})"
            )
    table.append(f"{'total':<{width}}  {sum(recorded.values()):>8}  {sum(counts.values()):>4}")
    return table, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="record the counts that fell (never a rise)")
    parser.add_argument("--record", type=Path, default=RECORD, help="default: tools/type_errors.json")
    args = parser.parse_args(argv)
    record: Path = args.record
    shown = record.relative_to(ROOT).as_posix() if record.resolve().is_relative_to(ROOT) else str(record)
    try:
        report, seconds = run_pyright()
    except RuntimeError as e:
        print(f"type_check: FAIL: {e}")
        return 1
    version = report.get("version", "?")
    counts, stray = count_errors(report)
    names = packages()
    recorded = read_record(record)
    if args.write:
        new = dict(counts) if recorded is None else {n: min(counts.get(n, 0), recorded.get(n, 0)) for n in names}
        new = {n: new.get(n, 0) for n in sorted(set(names) | set(new))}
        write_record(record, new, version)
        print(f"type_check: wrote {shown}: {sum(new.values())} errors in {len(new)} packages")
        return 0
    if recorded is None:
        print(f"type_check: FAIL: no {shown}: record today's counts with --write")
        return 1
    table, problems = compare(counts, recorded, names)
    pinned = json.loads(record.read_text(encoding="utf-8")).get("pyright")
    if pinned and pinned != version:
        print(f"type_check: note: counts were recorded with pyright {pinned}, this is {version}")
    print(f"type_check: pyright {version}, {report.get('summary', {}).get('filesAnalyzed', '?')} files, "
          f"{seconds:.0f} s")
    for line in table:
        print(f"  {line}")
    problems += [f"an error outside app/core, app/cli, app/gui and widgets: {s}" for s in stray]
    for problem in problems:
        print(f"type_check: FAIL: {problem}")
    if problems:
        return 1
    print("type_check: ok: no package has more errors than recorded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
