"""``torchax-playground install-desktop [--uninstall]``: put the app in the desktop's application menu with its
icon, and make ``.session`` files open in it on a double-click (freedesktop.org desktop entry, icon and MIME
type in ``$XDG_DATA_HOME``, default ``~/.local/share``; nothing system-wide, no root). ``--uninstall`` removes
exactly the files the install wrote (:mod:`app.core.desktop`)."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from app.core import desktop

#: Writes files only: the parser skips quieting the model libraries (which imports torch).
NEEDS_LIBRARIES = False


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    desktop = sub.add_parser("install-desktop",
                             help="add the app to the desktop's menu (icon, .session files open in it)")
    desktop.add_argument("--uninstall", action="store_true", help="remove exactly the files the install wrote")
    return desktop


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Exit 0 with one line per file written (or removed); 1 on a platform without freedesktop menus."""
    if sys.platform in ("darwin", "win32"):
        print("install-desktop writes freedesktop.org files (Linux, BSD); on macOS and Windows start the app with "
              "`torchax-playground` (the window has its icon; a second start hands its files to the open window)",
              file=err)
        return 1
    data = desktop.data_home()
    if args.uninstall:
        removed = desktop.uninstall(data)
        for path in removed:
            print(f"removed {path}", file=out)
        if not removed:
            print(f"nothing to remove: no install recorded in {desktop.record_path(data)}", file=out)
        return 0
    for path in desktop.install(data):
        print(f"wrote {path}", file=out)
    print(f"the menu entry runs: {desktop.describe(desktop.launch_command())} (remove with "
          "`torchax-playground install-desktop --uninstall`)", file=out)
    return 0
