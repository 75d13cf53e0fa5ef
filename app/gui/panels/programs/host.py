"""What the Code workspace's file actions and draft keeper use of their :class:`app.gui.panels.programs.wiring.
ProgramWiring` (which makes them, so they cannot import it without an import cycle): :class:`ProgramHost`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from app.gui.context import WindowContext
from widgets.code.code_editor import CodeEditor
from widgets.code.program_panel import ProgramPanel

if TYPE_CHECKING:
    from app.gui.workspaces import Workspaces


class RecentFiles(Protocol):
    """The recent program files, newest first (:class:`app.gui.panels.programs.files.ProgramFiles`)."""

    recent: list[str]


class ProgramHost(Protocol):
    """The program in the editor: its ``path`` (``""``: never saved), display ``name`` and whether it is a gallery
    ``example``, the ``editor`` and ``panel`` it shows in, the window's parts (``ctx``, ``workspaces``) and the
    intents that change it. GUI thread."""

    ctx: WindowContext
    workspaces: Workspaces
    editor: CodeEditor
    panel: ProgramPanel
    path: str
    name: str
    example: bool

    @property
    def files(self) -> RecentFiles: ...

    def set_program(self, text: str, path: str = "", name: str = "", example: bool = False,
                    modified: bool = False) -> None: ...

    def show_file(self, *_: object) -> None: ...

    def save_state(self) -> None: ...
