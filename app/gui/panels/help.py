"""Help ▸ Help (F1): the keyboard shortcuts and a short "what am I looking at" for each view."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMainWindow, QTextBrowser, QVBoxLayout, QWidget

from app.core.inspect.views import IR_VIEWS
from app.gui.menus import find_menu, insert_before

SHORTCUTS = (
    ("Ctrl+Enter", "run the prompt (loads the picked model first if it changed); in the Code workspace: load, "
     "trace and run the program in the editor"),
    ("Esc", "stop the run after its current step (a program: at its next line, even in a stuck Python loop); "
     "in a find bar, close the find bar"),
    ("Ctrl+R", "race the checked modes"),
    ("Ctrl+Shift+R", "replay cold start: clear the in-memory caches and rerun the last run or race"),
    ("Ctrl+Shift+O", "open session files (.session): recorded runs on the plot, text, IR, read-only; several overlay"),
    ("Ctrl+Alt+S", "save every run on the plot as a session file (File ▸ Export ▸ Perfetto trace for ui.perfetto.dev)"),
    ("Ctrl+Shift+Y", "replay the newest recorded run at its recorded pace (Demo menu: 4×, skip the compile wait); Esc stops"),
    ("Ctrl+F", "find in the IR view that has focus; Enter / Shift+Enter: next / previous match"),
    ("Ctrl+Shift+M", "profile the compiled step: measured time per HLO op, source line and module"),
    ("Ctrl+Shift+X", "record XLA's pass pipeline of the compiled step (the Passes tab; again: stop)"),
    ("Ctrl+Shift+P", "presentation mode: the plot large, with the token stream and race summary beside it"),
    ("Ctrl+B", "show or hide the controls sidebar (model, generation settings, devices)"),
    ("Ctrl+1 / Ctrl+2", "the Run workspace (prompt, stream, plot) / the Inspect workspace (every IR view, full window)"),
    ("Ctrl+3", "the Code workspace: your own program in an editor beside its jaxpr and the latency plot"),
    ("Ctrl+O / Ctrl+S / Ctrl+Shift+S", "open a program / save it / save it as (File ▸ Examples: the gallery)"),
    ("Ctrl+Alt+R", "race the compiler settings checked in the Demo kit's Settings race tab"),
    ("Ctrl+Alt+P", "after a settings race: its trade-off plot in the latency plot's place, or back"),
    ("Ctrl+Shift+L", "in the Code workspace's editor: live mode on / off (each edit compiled for the IR views, not run)"),
    ("Ctrl+Alt+1 / 2 / 3", "show or hide What JAX sees / the Demo kit / the Compile log (tabs under the plot)"),
    ("F11", "full screen"),
    ("F1", "this help"),
    ("Ctrl+Q", "quit"),
)

#: The window's panels, each with what it shows; the IR views' entries come from the IR-view catalog
#: (:data:`app.core.inspect.views.IR_VIEWS`, ``help``), after the latency plot's.
PANELS = (
    ("Token stream", "the prompt in grey (with a chat template: the formatted prompt), then each generated "
     "token; hover a token to see the call that produced it and its point on the plot."),
    ("Latency per call", "wall time of every model call on a log scale: prefill first, then one decode step "
     "per token. Orange stars are calls that compiled (trace → lower → compile for JAX; Dynamo → AOT "
     "autograd → Inductor for torch-compile), green diamonds compiles served from a disk cache; the dashed "
     "line is the steady decode median. Right-click for export, copy, clear and reset zoom."),
    ("Source map", "PyTorch source line ↔ ATen op ↔ jaxpr equations ↔ StableHLO ops ↔ HLO instructions, "
     "with FLOPs; the graph draws the dataflow of a selection; the diff compares prefill and decode."),
    ("Profile", "the compiled jit-static step run under jax.profiler: measured µs per step of each HLO op, "
     "fusion, PyTorch source line, ATen op and module, with achieved GB/s against the machine's measured "
     "read bandwidth (the roofline), and one step's timeline with the idle gaps; double-click a row or "
     "click a bar to see its HLO line."),
    ("Passes", "XLA's pass pipeline of a compiled step, recorded on demand: every pass with its compile time "
     "and whether it changed the module, instruction and fusion counts along the pipeline, the selected "
     "pass's HLO as a diff against the snapshot before it (unchanged regions folded), search across every "
     "snapshot (where does fusion.12 first appear?), each fusion with the pass that created it, what it "
     "absorbed and, with the fusion log, XLA's reasons; the bar takes the compile time apart."),
    ("Code", "your own JAX function or nn.Module: edit, Ctrl+Enter, and each call lands on the plot (the first "
     "one compiles); an error marks its line in red; click a jaxpr line to select its line in the editor, put "
     "the cursor on a line to highlight its equations. Unsaved edits are kept as a draft across sessions."),
    ("Demo kit", "races the modes on one prompt, each from cold, and tabulates TTFT, compile time, steady "
     "ms/token and the speed-up over PyTorch; the compile log says why each call compiled."),
)


#: Every "What am I looking at?" entry, in order: the run's panels, each IR view with a ``help``, the others.
VIEWS = (*PANELS[:2], *((v.title, v.help) for v in IR_VIEWS if v.help), *PANELS[2:])


def help_html() -> str:
    rows = "".join(f"<tr><td><b>{k}</b></td><td>{v}</td></tr>" for k, v in SHORTCUTS)
    views = "".join(f"<p><b>{name}</b> — {text}</p>" for name, text in VIEWS)
    return f"<h3>Keyboard</h3><table cellspacing='6'>{rows}</table><h3>What am I looking at?</h3>{views}"


class HelpDialog(QDialog):
    """A non-modal dialog; :meth:`text` returns its plain text (tests)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("helpDialog")
        self.setWindowTitle("torchax playground — help")
        self.browser = QTextBrowser()
        self.browser.setHtml(help_html())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)
        self.resize(640, 560)

    def text(self) -> str:
        return self.browser.toPlainText()


class WindowMenus(QObject):
    """File ▸ Quit (Ctrl+Q), View ▸ the workspaces, Reset layout and the plot's copy / clear / reset zoom,
    Demo ▸ Profile the step and Record the pass pipeline, Help ▸ Help (F1), in ``host``'s menu bar; each
    action's slot is given (the panel that does it), never looked up on the window."""

    def __init__(self, host: QMainWindow, workspace_actions: list[QAction], plot_actions: list[QAction],
                 reset_layout: Callable[[], None], profile: Callable[[], None],
                 record_passes: Callable[[], None]) -> None:
        super().__init__(host)
        self.host = host
        self.dialog: HelpDialog | None = None
        self.quit_action = find_menu(host, "&File").addAction("&Quit", host.close)
        self.quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        view = find_menu(host, "&View")
        first = view.actions()[0] if view.actions() else None
        insert_before(view, first, workspace_actions)
        if first is not None:
            view.insertSeparator(first)
        self.reset_layout_action = view.addAction("Reset &layout", reset_layout)
        view.addSeparator()
        for action in plot_actions:
            view.addAction(action)
        self.profile_action = find_menu(host, "&Demo").addAction("&Profile the step", profile)
        self.profile_action.setShortcut(QKeySequence("Ctrl+Shift+M"))
        self.passes_action = find_menu(host, "&Demo").addAction("Record the pass &pipeline", record_passes)
        self.passes_action.setShortcut(QKeySequence("Ctrl+Shift+X"))
        self.help_action = find_menu(host, "&Help").addAction("&Help", self.show_help)
        self.help_action.setShortcut(QKeySequence("F1"))
        for action in (self.quit_action, self.help_action, self.profile_action, self.passes_action):
            host.addAction(action)  # shortcuts keep working when the menu bar is hidden

    @Slot()
    def show_help(self) -> None:
        """The shortcuts and what each view shows, in a non-modal dialog."""
        if self.dialog is None:
            self.dialog = HelpDialog(self.host)
        self.dialog.show()
        self.dialog.raise_()
