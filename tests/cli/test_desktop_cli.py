"""``torchax-playground install-desktop [--uninstall]`` (issue 56, part 2): into a scratch data folder it writes
a desktop entry (valid for ``desktop-file-validate`` where installed), the icon and the ``.session`` MIME type,
and ``--uninstall`` removes exactly those files."""

from __future__ import annotations

import io
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app.cli import main


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def test_install_desktop_writes_valid_files_and_uninstall_removes_exactly_them(tmp_path, monkeypatch):
    data = tmp_path / "share"
    (data / "applications").mkdir(parents=True)
    theirs = data / "applications" / "someone-else.desktop"
    theirs.write_text("[Desktop Entry]\nType=Application\nName=x\nExec=x\n")
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    code, out, err = run_cli("install-desktop")
    assert code == 0, err
    entry = data / "applications" / "torchax-playground.desktop"
    icon = data / "icons" / "hicolor" / "scalable" / "apps" / "torchax-playground.svg"
    mime = data / "mime" / "packages" / "torchax-playground.xml"
    for path in (entry, icon, mime):
        assert f"wrote {path}" in out
    text = entry.read_text()
    assert "MimeType=application/x-torchax-playground-session;" in text and "Icon=torchax-playground" in text
    exec_line = next(x for x in text.splitlines() if x.startswith("Exec="))
    assert exec_line.endswith(" %F") and "torchax-playground" in exec_line
    ET.parse(icon)  # a well-formed SVG
    root = ET.parse(mime).getroot()
    ns = "{http://www.freedesktop.org/standards/shared-mime-info}"
    kind = root.find(f"{ns}mime-type")
    assert kind is not None and kind.get("type") == "application/x-torchax-playground-session"
    assert kind.find(f"{ns}glob").get("pattern") == "*.session"  # type: ignore[union-attr]
    if shutil.which("desktop-file-validate"):
        check = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True)
        assert check.returncode == 0 and not check.stdout.strip(), check.stdout
    if shutil.which("update-mime-database"):  # the MIME database now knows the type (what a file manager reads)
        assert "application/x-torchax-playground-session" in (data / "mime" / "globs2").read_text()
    record = data / "torchax-playground" / "desktop-files.txt"
    assert sorted(record.read_text().split()) == sorted(str(p) for p in (entry, icon, mime))

    before = _files(data)
    code, out, err = run_cli("install-desktop", "--uninstall")
    assert code == 0, err
    after = _files(data)
    removed = before - after
    # exactly the three files and their record; caches the desktop tools regenerate are theirs, not ours
    assert {p for p in removed if "mime" not in p.parts or p.parent.name == "packages"} == {entry, icon, mime, record}
    assert theirs.exists() and not (data / "torchax-playground").exists()
    if shutil.which("update-mime-database"):
        assert "torchax-playground" not in (data / "mime" / "globs2").read_text()
    code, out, _ = run_cli("install-desktop", "--uninstall")
    assert code == 0 and "nothing to remove" in out


@pytest.mark.parametrize("command, expected", [
    (["/opt/my tools/bin/torchax-playground"], 'Exec="/opt/my tools/bin/torchax-playground" %F'),
    (["/usr/bin/python3", "-m", "app"], "Exec=/usr/bin/python3 -m app %F"),
])
def test_the_exec_line_quotes_paths_as_the_specification_asks(command, expected):
    from app.core.desktop import desktop_entry

    assert expected in desktop_entry(command).splitlines()
