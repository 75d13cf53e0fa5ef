"""The house gates its growth: modules over 400 lines and functions over 60 lines in app/ and widgets/, and
folders of the window's code (widgets/ and app/gui/, each sub-package) over 12 modules.

    python tools/size_check.py            # fails (exit 1) on a new offender or a listed one that grew
    python tools/size_check.py --write    # rewrites tools/size_allowlist.txt from the code as it is

Today's offenders are listed in ``tools/size_allowlist.txt``, one a line: ``module PATH LINES`` or
``function PATH:QUALNAME LINES``. The list may only shrink. The check fails, one line per problem, when a
module or a function that is not listed is over its limit, or when a listed one grew beyond its recorded size.
A listed entry that is now within its limit (or gone) only prints a note saying to delete its line, and one
that shrank but is still over prints a note saying to record its new size with ``--write``.

A module's size is its number of lines; a function's (or method's) runs from its ``def`` line, decorators
included, to its last line (``end_lineno``). A nested function counts on its own too (``outer.inner``), and
inside its enclosing function. A folder's modules are its ``.py`` files but ``__init__.py`` (no allowlist: a
folder that outgrows it splits by what its modules serve). Standard library only (``ast``): `make test` runs it before pytest.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

MODULE_LIMIT = 400
FUNCTION_LIMIT = 60
DIRS = ("app", "widgets")
FOLDER_LIMIT = 12
FOLDER_DIRS = ("widgets", "app/gui")  # every folder under these (napari's widgets folders: ≤ 27, glue-qt's ≤ 9)
ROOT = Path(__file__).resolve().parent.parent
ALLOWLIST = ROOT / "tools" / "size_allowlist.txt"
HEADER = f"""\
# Offenders of tools/size_check.py: modules over {MODULE_LIMIT} lines, functions over {FUNCTION_LIMIT} lines
# (from the def line, decorators included, to the last line), in app/ and widgets/.
# This list may only shrink: `make test` fails on an offender that is not here or that grew beyond its size
# here. After splitting one, delete its line (or run `python tools/size_check.py --write`).
# kind  path[:qualname]  lines
"""


@dataclass(frozen=True)
class Entry:
    kind: str  # "module" or "function"
    key: str  # "app/x.py" or "app/x.py:Class.method"
    lines: int

    @property
    def limit(self) -> int:
        return MODULE_LIMIT if self.kind == "module" else FUNCTION_LIMIT

    def line(self) -> str:
        return f"{self.kind} {self.key} {self.lines}"


def _functions(tree: ast.Module) -> list[tuple[str, int]]:
    """(qualname, lines) of every function and method in a module, nested ones included."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                found.append((name, (child.end_lineno or child.lineno) - first + 1))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)  # functions under if/try/with keep their enclosing name

    visit(tree, "")
    return found


def measure_file(path: Path, rel: str) -> list[Entry]:
    """Every module and function in one file, over its limit or not."""
    text = path.read_text(encoding="utf-8")
    entries = [Entry("module", rel, len(text.splitlines()))]
    sizes: dict[str, int] = {}
    for name, lines in _functions(ast.parse(text, filename=rel)):
        sizes[name] = max(lines, sizes.get(name, 0))  # a property's getter and setter share one name
    entries += [Entry("function", f"{rel}:{name}", lines) for name, lines in sizes.items()]
    return entries


def measure(root: Path = ROOT, dirs: tuple[str, ...] = DIRS) -> dict[str, Entry]:
    """The offenders under root's dirs (modules and functions over their limits), by key."""
    offenders: dict[str, Entry] = {}
    for d in dirs:
        for path in sorted((root / d).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            for entry in measure_file(path, path.relative_to(root).as_posix()):
                if entry.lines > entry.limit:
                    offenders[entry.key] = entry
    return offenders


def read_allowlist(path: Path) -> dict[str, Entry]:
    """The recorded offenders; a missing file lists none. A malformed line raises ValueError."""
    if not path.exists():
        return {}
    listed: dict[str, Entry] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 3 or parts[0] not in ("module", "function") or not parts[2].isdigit():
            raise ValueError(f"{path}:{number}: expected 'module PATH LINES' or 'function PATH:NAME LINES': {raw!r}")
        listed[parts[1]] = Entry(parts[0], parts[1], int(parts[2]))
    return listed


def check(measured: dict[str, Entry], listed: dict[str, Entry], allowlist_name: str) -> tuple[list[str], list[str]]:
    """(problems, notes): a problem fails the check, a note only says what to tidy."""
    problems: list[str] = []
    notes: list[str] = []
    for key, entry in sorted(measured.items()):
        what = f"{entry.kind} {key}"
        recorded = listed.get(key)
        if recorded is None:
            problems.append(
                f"{what} is {entry.lines} lines, over the {entry.limit}-line limit, and not in {allowlist_name}:"
                " split it"
            )
        elif entry.lines > recorded.lines:
            problems.append(
                f"{what} grew from {recorded.lines} to {entry.lines} lines (limit {entry.limit}); listed offenders"
                f" may only shrink: bring it back to {recorded.lines} lines or fewer"
            )
        elif entry.lines < recorded.lines:
            notes.append(
                f"{what} shrank from {recorded.lines} to {entry.lines} lines: record it with"
                " `python tools/size_check.py --write`"
            )
    for key, recorded in sorted(listed.items()):
        if key not in measured:
            notes.append(
                f"{recorded.kind} {key} is now within its {recorded.limit}-line limit (or gone): delete its line"
                f" from {allowlist_name}"
            )
    return problems, notes


def write_allowlist(path: Path, measured: dict[str, Entry]) -> None:
    entries = sorted(measured.values(), key=lambda e: (e.kind != "module", e.key))
    path.write_text(HEADER + "".join(e.line() + "\n" for e in entries), encoding="utf-8")


def crowded_folders(root: Path = ROOT, dirs: tuple[str, ...] = FOLDER_DIRS) -> list[str]:
    """``"widgets/plot has 13 modules"`` for each folder under ``dirs`` with more than :data:`FOLDER_LIMIT`."""
    out = []
    for top in dirs:
        for folder in sorted(p for p in [root / top, *(root / top).rglob("*")] if p.is_dir()):
            if folder.name == "__pycache__":
                continue
            n = sum(1 for f in folder.glob("*.py") if f.name != "__init__.py")
            if n > FOLDER_LIMIT:
                out.append(f"{folder.relative_to(root).as_posix()} has {n} modules (limit {FOLDER_LIMIT})")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the allowlist from the current code")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository root (default: this checkout)")
    parser.add_argument("--allowlist", type=Path, default=None, help="default: tools/size_allowlist.txt")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    allowlist = args.allowlist or root / "tools" / "size_allowlist.txt"
    name = allowlist.relative_to(root).as_posix() if allowlist.is_relative_to(root) else str(allowlist)
    try:
        listed = read_allowlist(allowlist)
        measured = measure(root)
    except (ValueError, SyntaxError) as e:
        print(f"size_check: {e}")
        return 1
    modules = sum(e.kind == "module" for e in measured.values())
    functions = len(measured) - modules
    if args.write:
        for key, entry in sorted(measured.items()):
            old = listed.get(key)
            if old is None or entry.lines > old.lines:
                was = "new" if old is None else f"was {old.lines}"
                print(f"size_check: note: {entry.line()} ({was}; the list should only shrink)")
        write_allowlist(allowlist, measured)
        print(f"size_check: wrote {name}: {modules} modules over {MODULE_LIMIT} lines, "
              f"{functions} functions over {FUNCTION_LIMIT} lines")
        return 0
    problems, notes = check(measured, listed, name)
    problems += crowded_folders(root)
    for note in notes:
        print(f"size_check: note: {note}")
    for problem in problems:
        print(f"size_check: FAIL: {problem}")
    if problems:
        print(f"size_check: {len(problems)} problem(s); limits: modules {MODULE_LIMIT} lines, functions "
              f"{FUNCTION_LIMIT} lines (app/ and widgets/)")
        return 1
    print(f"size_check: ok: {modules} modules over {MODULE_LIMIT} lines and {functions} functions over "
          f"{FUNCTION_LIMIT} lines, all listed in {name}, none grew")
    return 0


if __name__ == "__main__":
    sys.exit(main())
