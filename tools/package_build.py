"""The installed layout of the app (issue 56): one import package, ``torchax_playground``, holding ``app/``,
``widgets/`` and the data the app reads (``assets/``), so a wheel claims no generic top-level name.

The repository keeps ``app/`` and ``widgets/`` at its root and imports them absolutely (``from app.core…``,
``from widgets…``). ``setup.py``'s ``build_py`` calls :func:`build_tree`, which writes the built copies under
``torchax_playground/`` and rewrites, in each ``.py`` file, what names the project's own modules — the way
vendoring tools rewrite imports — found with :mod:`tokenize` (never in comments):

- import statements: ``from app.x import y`` → ``from torchax_playground.app.x import y``, ``import widgets.z as w``
  → ``import torchax_playground.widgets.z as w``;
- string literals that are a dotted module name of the project, optionally ``module:attribute``
  (``"app.core.modes.eager:TorchMode"``, ``"app.core.passes._child"``);
- a bare ``"app"`` / ``"widgets"`` literal right after a ``"-m"`` literal (``[python, "-m", "app"]``), and the
  words ``-m app…`` / ``-m widgets…`` inside any string (``python -m app`` in a docstring or message).

The build fails (:class:`UnknownReference`) on what it cannot rewrite: ``import app.x`` without ``as`` (it binds
the name ``app``), a relative import out of a package, a string literal that starts with ``app.`` / ``widgets.``
but is not a module name (``"app." + name``), an f-string that starts with one (``f"app.{x}"``). The rewritten
file is parsed again and checked for any project import left (:func:`check_rewritten`).

Standard library only: ``setup.py`` loads this file by path, before anything of the project is importable.
"""

from __future__ import annotations

import ast
import io
import re
import shutil
import tokenize
from pathlib import Path

#: The one import package the wheel installs.
PACKAGE = "torchax_playground"
#: The project's top-level packages in the repository, installed as ``torchax_playground.<name>``.
PROJECT_PACKAGES = ("app", "widgets")
#: The data the app reads at run time (app/core/paths.py), relative to ``assets/``: installed as
#: ``torchax_playground/assets/…``. MANIFEST.in puts the same files in the sdist. The screenshots in
#: ``assets/*.png`` are the README's, not the app's.
ASSETS = ("models/pydoc-llama", "icons/torchax-playground.svg", "style.qss", "prompts.json")

_TOP = "|".join(PROJECT_PACKAGES)
#: a module name of the project, optionally ``:attribute`` (an entry-point style reference)
_MODULE_REF = re.compile(rf"^(?:{_TOP})(?:\.[A-Za-z_]\w*)*(?::[A-Za-z_][\w.]*)?$")
#: looks like a reference into the project (a dotted name or ``name:attr`` starting with one of its packages)
_SUSPECT = re.compile(rf"^(?:{_TOP})[.:]")
#: ``-m app`` / ``-m widgets…`` inside a string
_DASH_M = re.compile(rf"(?<=-m )(?=(?:{_TOP})(?![\w-]))")
_STRING = re.compile(r"^([rRbBuU]*)('''|\"\"\"|'|\")(.*)\2$", re.S)
_SKIP = (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)


class UnknownReference(Exception):
    """A reference to the project's modules that the build cannot rewrite (file, line and why)."""


def _fail(filename: str, line: int, why: str) -> UnknownReference:
    return UnknownReference(f"{filename}:{line}: {why} (tools/package_build.py rewrites only what its "
                            "docstring lists; write the reference as one of those)")


def _is_project(dotted: str) -> bool:
    return dotted.split(".", 1)[0] in PROJECT_PACKAGES


def _dotted(tokens: list[tokenize.TokenInfo], i: int) -> tuple[str, int]:
    """The dotted name starting at ``tokens[i]`` and the index after it."""
    parts = [tokens[i].string]
    i += 1
    while i + 1 < len(tokens) and tokens[i].string == "." and tokens[i + 1].type == tokenize.NAME:
        parts.append(tokens[i + 1].string)
        i += 2
    return ".".join(parts), i


def _import_edits(tokens: list[tokenize.TokenInfo], filename: str) -> list[tuple[tuple[int, int], str]]:
    """Insertions (position, text) that put ``torchax_playground.`` before the project's imported modules."""
    edits = []
    significant = [t for t in tokens if t.type not in _SKIP]
    for k, tok in enumerate(significant):
        if tok.type != tokenize.NAME or tok.string not in ("import", "from"):
            continue
        if k and significant[k - 1].string not in (";", ":") and significant[k - 1].start[0] == tok.start[0]:
            continue  # ``from x import y``'s ``import``, or a name in an expression (``yield from``)
        if tok.string == "from":
            nxt = significant[k + 1]
            if nxt.string in (".", "..", "..."):
                continue  # a relative import stays inside whatever package the file is in
            if nxt.type == tokenize.NAME and _is_project(nxt.string):
                edits.append((nxt.start, f"{PACKAGE}."))
            continue
        j = k + 1
        while j < len(significant) and significant[j].type == tokenize.NAME:
            name, j = _dotted(significant, j)
            aliased = j < len(significant) and significant[j].string == "as"
            if _is_project(name):
                if not aliased:
                    raise _fail(filename, tok.start[0], f"'import {name}' binds the name {name.split('.')[0]!r}; "
                                f"write 'from … import …' or 'import {name} as …'")
                edits.append((significant[j - (2 * name.count(".") + 1)].start, f"{PACKAGE}."))
            if aliased:
                j += 2
            if j < len(significant) and significant[j].string == ",":
                j += 1
            else:
                break
    return edits


def _string_edit(tok: tokenize.TokenInfo, after_dash_m: bool, filename: str) -> str | None:
    """The rewritten text of one STRING token, or None to keep it."""
    m = _STRING.match(tok.string)
    if m is None or "b" in m.group(1).lower():
        return None
    prefix, quote, body = m.groups()
    value = body if "\\" not in body else None
    if value is not None and not any(c.isspace() for c in value):  # prose and docstrings have spaces
        if _MODULE_REF.match(value) and (after_dash_m or value not in PROJECT_PACKAGES):
            return f"{prefix}{quote}{PACKAGE}.{value}{quote}"
        if _SUSPECT.match(value):
            raise _fail(filename, tok.start[0], f"the string {value!r} names the project's modules but is not a "
                        "module name (module or module:attribute)")
    new_body = _DASH_M.sub(f"{PACKAGE}.", body)
    return f"{prefix}{quote}{new_body}{quote}" if new_body != body else None


def rewrite_source(text: str, filename: str = "<source>") -> str:
    """``text`` (a module of the project) with its references to ``app`` / ``widgets`` put under
    :data:`PACKAGE` (see the module docstring). Raises :class:`UnknownReference`."""
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    edits: list[tuple[tuple[int, int], tuple[int, int], str]] = [
        (pos, pos, ins) for pos, ins in _import_edits(tokens, filename)]
    significant = [t for t in tokens if t.type not in _SKIP]
    for k, tok in enumerate(significant):
        prev = significant[k - 1] if k else None
        if tok.type == tokenize.STRING:
            after_dash_m = (k >= 2 and prev is not None and prev.string == ","
                            and significant[k - 2].type == tokenize.STRING
                            and significant[k - 2].string.strip("'\"") == "-m")
            new = _string_edit(tok, after_dash_m, filename)
            if new is not None:
                edits.append((tok.start, tok.end, new))
        elif tok.type == tokenize.FSTRING_MIDDLE:
            if prev is not None and prev.type == tokenize.FSTRING_START and _SUSPECT.match(tok.string):
                raise _fail(filename, tok.start[0], f"an f-string starting {tok.string!r} builds a name of the "
                            "project's modules at run time; name the module in a plain string")
            new_body = _DASH_M.sub(f"{PACKAGE}.", tok.string)
            if new_body != tok.string and ("{" in tok.string or "}" in tok.string):
                raise _fail(filename, tok.start[0], "'-m app' in an f-string part with braces")
            if new_body != tok.string:
                edits.append((tok.start, tok.end, new_body))
    lines = text.splitlines(keepends=True)
    for start, end, new in sorted(edits, reverse=True):
        (r0, c0), (r1, c1) = start, end
        head, tail = lines[r0 - 1][:c0], lines[r1 - 1][c1:]
        lines[r0 - 1:r1] = [head + new + tail]
    out = "".join(lines)
    check_rewritten(out, filename)
    return out


def check_rewritten(text: str, filename: str) -> None:
    """Raise :class:`UnknownReference` if ``text`` still imports ``app`` / ``widgets`` at top level or holds a
    string literal that is one of their module names (a bare ``"app"`` / ``"widgets"`` is a folder's name)."""
    for node in ast.walk(ast.parse(text, filename)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _MODULE_REF.match(node.value) \
                and node.value not in PROJECT_PACKAGES:
            names = [node.value]
        left = [n for n in names if _is_project(n)]
        if left:
            raise _fail(filename, getattr(node, "lineno", 0), f"{left[0]!r} is still a top-level project name")


def _sources(root: Path) -> list[tuple[Path, Path]]:
    """(source file, path inside the installed package) for every file :func:`build_tree` writes."""
    out = []
    for top, dest in [(PACKAGE, Path())] + [(p, Path(p)) for p in PROJECT_PACKAGES]:
        for path in sorted((root / top).rglob("*.py")):
            if "__pycache__" not in path.parts:
                out.append((path, dest / path.relative_to(root / top)))
    for item in ASSETS:
        src = root / "assets" / item
        if not src.exists():
            raise FileNotFoundError(f"{src}: an asset the app reads is missing (MANIFEST.in must ship it)")
        files = sorted(p for p in src.rglob("*") if p.is_file()) if src.is_dir() else [src]
        out.extend((f, Path("assets") / f.relative_to(root / "assets")) for f in files)
    return out


def planned_outputs(root: Path, build_lib: Path) -> dict[str, str]:
    """``{built file: source file}`` of :func:`build_tree` (what ``build_py.get_output_mapping`` returns)."""
    return {str(build_lib / PACKAGE / rel): str(src) for src, rel in _sources(root)}


def build_tree(root: Path, build_lib: Path) -> dict[str, str]:
    """Write the installed layout of the checkout or unpacked sdist at ``root`` into ``build_lib``:
    ``torchax_playground/{__init__,__main__}.py``, ``torchax_playground/app/…``, ``torchax_playground/widgets/…``
    (rewritten, :func:`rewrite_source`) and ``torchax_playground/assets/…`` (:data:`ASSETS`, copied). Any
    ``app`` / ``widgets`` / ``torchax_playground`` left in ``build_lib`` by an earlier build is removed first.
    Returns ``{built file: source file}``. Raises :class:`UnknownReference`, ``FileNotFoundError``."""
    for stale in (PACKAGE, *PROJECT_PACKAGES):
        shutil.rmtree(build_lib / stale, ignore_errors=True)
    written = {}
    for src, rel in _sources(root):
        out = build_lib / PACKAGE / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.suffix == ".py":
            text = src.read_text(encoding="utf-8")
            out.write_text(rewrite_source(text, str(src.relative_to(root))), encoding="utf-8")
        else:
            shutil.copyfile(src, out)
        written[str(out)] = str(src)
    return written
