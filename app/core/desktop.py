"""Desktop integration files (freedesktop.org: Linux and the BSDs): a ``.desktop`` entry that puts the app in
the application menu, its icon, and a MIME type for ``.session`` files
(``application/x-torchax-playground-session``) so a double-click opens them in the app — written into the
user's data folder (``$XDG_DATA_HOME``, default ``~/.local/share``), never system-wide.

:func:`install` records every file it wrote in ``<data>/torchax-playground/desktop-files.txt``;
:func:`uninstall` removes exactly those files (and that record), nothing else. Both refresh the desktop's
MIME and menu caches when ``update-mime-database`` / ``update-desktop-database`` are installed. No Qt.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from app.core.paths import asset

APP_ID = "torchax-playground"
MIME_TYPE = "application/x-torchax-playground-session"
#: The app's icon (a scalable SVG): the window's icon and the menu entry's.
ICON = asset("icons", f"{APP_ID}.svg")
RECORD = "desktop-files.txt"

MIME_XML = f"""<?xml version="1.0" encoding="UTF-8"?>
<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">
  <mime-type type="{MIME_TYPE}">
    <comment>torchax playground session</comment>
    <icon name="{APP_ID}"/>
    <sub-class-of type="application/zip"/>
    <glob pattern="*.session"/>
  </mime-type>
</mime-info>
"""


def data_home() -> Path:
    """``$XDG_DATA_HOME``, else ``~/.local/share``."""
    value = os.environ.get("XDG_DATA_HOME", "")
    return Path(value).expanduser() if value and Path(value).expanduser().is_absolute() else Path.home() / ".local/share"


def launch_command() -> list[str]:
    """How the menu entry starts the app: the ``torchax-playground`` script beside this Python (a virtual
    environment's, or ``uv tool``'s / ``pipx``'s), else the script this process was started by, else the one
    on ``PATH``, else ``python -m app`` (an installed copy's build says ``python -m torchax_playground.app``:
    tools/package_build.py rewrites the module name)."""
    beside = Path(sys.executable).parent / APP_ID
    if beside.exists():
        return [str(beside)]
    started = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if started is not None and started.name == APP_ID and started.is_file():
        return [str(started.resolve())]
    found = shutil.which(APP_ID)
    return [found] if found else [sys.executable, "-m", "app"]


def _exec_arg(arg: str) -> str:
    """One argument of a desktop entry's ``Exec`` key, quoted as the specification asks when needed."""
    if arg and not any(c in arg for c in " \t\n\"'\\><~|&;$*?#()`"):
        return arg.replace("%", "%%")
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`").replace("$", "\\$")
    return '"' + escaped.replace("%", "%%") + '"'


def desktop_entry(command: list[str] | None = None) -> str:
    """The ``.desktop`` file's text; ``Exec`` is ``command`` (:func:`launch_command`) with ``%F`` (the files
    double-clicked). A ``.desktop`` value escapes backslashes once more than ``Exec`` quoting does."""
    exec_line = " ".join(_exec_arg(a) for a in (command or launch_command())).replace("\\", "\\\\")
    return "\n".join([
        "[Desktop Entry]",
        "Type=Application",
        "Version=1.4",
        "Name=torchax playground",
        "GenericName=LLM compiler playground",
        "Comment=Run Hugging Face causal LMs on JAX through torchax: jaxpr, StableHLO, HLO and latency per call",
        f"Exec={exec_line} %F",
        f"TryExec={command[0] if command else launch_command()[0]}",
        f"Icon={APP_ID}",
        "Terminal=false",
        "Categories=Development;",
        f"MimeType={MIME_TYPE};",
        "Keywords=JAX;torchax;XLA;HLO;StableHLO;PyTorch;LLM;",
        f"StartupWMClass={APP_ID}",
        "",
    ])


def planned_files(data: Path | None = None) -> dict[Path, str | Path]:
    """``{destination: text or source file}`` of what :func:`install` writes under ``data``."""
    data = data or data_home()
    return {
        data / "applications" / f"{APP_ID}.desktop": desktop_entry(),
        data / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg": ICON,
        data / "mime" / "packages" / f"{APP_ID}.xml": MIME_XML,
    }


def record_path(data: Path | None = None) -> Path:
    return (data or data_home()) / APP_ID / RECORD


def install(data: Path | None = None) -> list[Path]:
    """Write the desktop entry, the icon and the MIME type under ``data`` (:func:`data_home`); record them.
    Returns the files written. Raises OSError when a folder cannot be written."""
    data = data or data_home()
    written: list[Path] = []
    for dest, content in planned_files(data).items():
        dest.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            shutil.copyfile(content, dest)
        else:
            dest.write_text(content, encoding="utf-8")
        written.append(dest)
    record = record_path(data)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text("".join(f"{p}\n" for p in written), encoding="utf-8")
    refresh_caches(data)
    return written


def uninstall(data: Path | None = None) -> list[Path]:
    """Remove exactly the files :func:`install` recorded under ``data`` (and the record; its folder when empty
    afterwards). Returns the files removed (``[]``: nothing was installed there)."""
    data = data or data_home()
    record = record_path(data)
    try:
        listed = [Path(x) for x in record.read_text(encoding="utf-8").splitlines() if x.strip()]
    except OSError:
        return []
    removed = []
    for path in listed:
        if path.is_file() and path.is_relative_to(data):
            path.unlink()
            removed.append(path)
    record.unlink()
    if not any(record.parent.iterdir()):
        record.parent.rmdir()
    refresh_caches(data)
    return removed


def refresh_caches(data: Path) -> list[str]:
    """Run ``update-mime-database`` and ``update-desktop-database`` on ``data``'s folders where installed (so
    the menu and the file manager see the change now); returns the tools run. Their failures are ignored."""
    ran = []
    for tool, folder in (("update-mime-database", data / "mime"), ("update-desktop-database", data / "applications")):
        if shutil.which(tool) and folder.is_dir():
            subprocess.run([tool, str(folder)], capture_output=True, timeout=60, check=False)
            ran.append(tool)
    return ran


def describe(command: list[str]) -> str:
    return shlex.join(command)
