"""docs/architecture.md stays true: every file or folder it names exists, each newcomer task ("Add a mode",
"Add an IR view", "Add a backend", "Add an example") lists files that exist (issue 35, item 6), and the
"Packages" block names every package folder of app/ and widgets/ and every module in it (issue 57, item 5)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
#: a repository path as the page writes it: `app/core/…`, [`app/…`](../app/…), tests/…, widgets/…
PATH = re.compile(r"(?:(?<=\.\./)|(?<![\w/.-]))((?:app|widgets|tests|bench|tools|docs|assets)/[\w./*-]*[\w*/])")
#: made when the tests run (ignored by git)
GENERATED = ("tests/artifacts",)


def _paths(text: str) -> list[str]:
    return sorted({m.group(1).rstrip("/.") for m in PATH.finditer(text)})


def _exists(path: str) -> bool:
    if path in GENERATED:
        return True
    if "*" in path:
        return any(ROOT.glob(path))
    return (ROOT / path).exists()


def test_every_path_the_page_names_exists():
    missing = [p for p in _paths(DOC.read_text(encoding="utf-8")) if not _exists(p)]
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_each_newcomer_task_lists_files_that_exist():
    text = DOC.read_text(encoding="utf-8")
    sections = dict(re.findall(r"^### (Add [^\n]+)\n(.*?)(?=^### |^## |\Z)", text, flags=re.M | re.S))
    for task in ("Add a mode", "Add an IR view", "Add a backend", "Add an example"):
        body = next((b for t, b in sections.items() if t.lower().startswith(task.lower())), None)
        assert body is not None, f"docs/architecture.md has no '### {task}' section"
        paths = _paths(body)
        assert paths, f"'{task}' lists no files"
        assert all(_exists(p) for p in paths), (task, [p for p in paths if not _exists(p)])


def test_the_path_check_can_fail(tmp_path):
    assert _paths("see `app/core/nowhere.py` and [x](../app/core/engine/engine.py)") == [
        "app/core/engine/engine.py", "app/core/nowhere.py"]
    assert not _exists("app/core/nowhere.py")


#: folders of package data, not modules of the app: the examples gallery (`app.core.programs.gallery` lists them)
DATA_FOLDERS = ("app/examples",)
#: a name as a whole word: `run_list`, `window.py`, `(+ source_map_io)`, not `run_lists` or `my_run_list`
_WORD = r"(?<![\w]){}(?![\w])"


def package_entries(text: str) -> dict[str, str]:
    """The "## Packages" code block as {key: entry text}: a key is a line's first word at column 0 (`app/core/`,
    `app/options.py`), its entry that line's rest and the indented lines under it."""
    section = re.search(r"^## Packages\n.*?^```\n(.*?)^```", text, flags=re.M | re.S)
    assert section, "docs/architecture.md has no '## Packages' code block"
    entries: dict[str, str] = {}
    key = None
    for line in section.group(1).splitlines():
        if line and not line[0].isspace():
            key, _, rest = line.partition(" ")
            entries[key] = rest.strip()
        elif key is not None and line.strip():
            entries[key] += " " + line.strip()
    return entries


def package_folders(root: Path = ROOT) -> dict[str, list[str]]:
    """Every folder under app/ and widgets/ that holds modules (.py files but `__init__.py`), with their names,
    relative to root; the folders of package data left out."""
    folders: dict[str, list[str]] = {}
    for top in ("app", "widgets"):
        for path in sorted((root / top).rglob("*.py")):
            folder = path.parent.relative_to(root).as_posix()
            if path.name != "__init__.py" and "__pycache__" not in path.parts and folder not in DATA_FOLDERS:
                folders.setdefault(folder, []).append(path.stem)
    return folders


def unnamed_modules(entries: dict[str, str], folders: dict[str, list[str]]) -> list[str]:
    """What the page leaves out: a package with no entry (neither `folder/` nor a `folder/module.py` line), and a
    module its package's entry does not name as a word (or that has no line of its own)."""
    problems = []
    for folder, modules in sorted(folders.items()):
        entry = entries.get(folder + "/")
        files = {m for m in modules if folder + f"/{m}.py" in entries}
        if entry is None and not files:
            problems.append(f"{folder}/ has no entry (its modules: {', '.join(modules)})")
            continue
        unnamed = [m for m in modules if m not in files and not re.search(_WORD.format(re.escape(m)), entry or "")]
        if unnamed:
            problems.append(f"{folder}/'s entry does not name {', '.join(unnamed)}")
    return problems


def test_every_package_and_module_has_its_words_on_the_page():
    problems = unnamed_modules(package_entries(DOC.read_text(encoding="utf-8")), package_folders())
    assert not problems, (
        "docs/architecture.md's '## Packages' block leaves out (name each module in its package's entry, with a few"
        " words from its docstring's first line):\n" + "\n".join(problems))


def test_the_package_check_fails_on_an_omission():
    page = "\n".join([
        "## Packages", "", "```",
        "app/core/session/        model (Session) on run_list, service (ComputeService), requests",
        "                         and program_requests",
        "app/options.py           --devices",
        "```", "## Next", "```", "app/gui/                 not the packages block", "```",
    ])
    entries = package_entries(page)
    assert entries == {
        "app/core/session/": "model (Session) on run_list, service (ComputeService), requests and program_requests",
        "app/options.py": "--devices",
    }
    folders = {"app/core/session": ["model", "run_list", "service", "requests", "program_requests"],
               "app": ["options"]}
    assert unnamed_modules(entries, folders) == []
    folders["app/core/session"].append("run")  # "run_list" does not name it
    folders["app"].append("__main__")
    folders["app/gui"] = ["window"]
    assert unnamed_modules(entries, folders) == [
        "app/'s entry does not name __main__",
        "app/core/session/'s entry does not name run",
        "app/gui/ has no entry (its modules: window)",
    ]
